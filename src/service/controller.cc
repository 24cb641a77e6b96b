#include "service/controller.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "policy/policy_factory.h"
#include "policy/row_controller.h"
#include "telemetry/prometheus_text.h"

namespace headroom::service {
namespace {

// Characters of the row name that go into request ids (agents take at most 128 in all).
constexpr size_t kRowNameInRequestId = 48;

using nlohmann::ordered_json;

template <class T>
bool Ready(const std::future<T>& f) {
  return f.valid() && f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

// v rounded to `unit` (a power of ten at most 1), printing as the short decimal it is.
double Round(double v, double unit) { return std::round(v / unit) / std::round(1 / unit); }

std::vector<policy::ControlledServer> ControlledServers(const ControllerConfig& config) {
  std::vector<policy::ControlledServer> out;
  for (const AgentEndpoint& a : config.agents) {
    out.push_back(
        {.priority = a.priority,
         .rated_power = a.server.max_system_power,
         .non_gpu_power = a.server.non_gpu_power,
         .gpu_idle_floor = policy::IdleFloor(a.server.gpus_per_server, config.gpu.idle_power),
         .gpu = config.gpu});
  }
  return out;
}

}  // namespace

core::Result<std::unique_ptr<Controller>> Controller::Create(
    ControllerConfig config, std::vector<std::unique_ptr<AgentLink>> links,
    std::unique_ptr<RowMeter> meter, core::Clock* clock, ControllerOptions options) {
  if (links.size() != config.agents.size()) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} agent links for {} agents", links.size(), config.agents.size())));
  }
  if (config.telemetry.source != TelemetrySource::kAgents && !meter) {
    return core::Fail(core::Error::InvalidArgument("telemetry source needs a meter"));
  }
  HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<policy::RowPolicy> policy,
                            policy::MakePolicy(config.policy_name, config.params));
  for (const std::vector<std::string>& names : AgentsSharingTokens(config)) {
    spdlog::warn(
        "agents {} share one token: a node holding it can command the others; give each agent "
        "its own token_file",
        fmt::join(names, ", "));
  }
  std::vector<Server> servers(config.agents.size());
  for (size_t i = 0; i < servers.size(); ++i) {
    servers[i].endpoint = config.agents[i];
    servers[i].link = std::move(links[i]);
    servers[i].counted.as = "unknown";
  }
  return std::unique_ptr<Controller>(new Controller(std::move(config), std::move(servers),
                                                    std::move(meter), std::move(policy), clock,
                                                    std::move(options)));
}

Controller::Controller(ControllerConfig config, std::vector<Server> servers,
                       std::unique_ptr<RowMeter> meter, std::unique_ptr<policy::RowPolicy> policy,
                       core::Clock* clock, ControllerOptions options)
    : config_(std::move(config)),
      grid_(config_.grid, config_.budget),
      servers_(std::move(servers)),
      meter_(std::move(meter)),
      policy_(std::move(policy)),
      row_(*policy_,
           {.restart_hold = config_.restart_hold,
            .escalate_after = config_.escalate_after,
            .brake_release = config_.params.brake_release,
            .converge_within = config_.converge_within,
            .ramp_up_w_per_s = config_.grid.ramp_up_w_per_s,
            .ramp_window = config_.grid.ramp_window},
           ControlledServers(config_)),
      clock_(clock),
      options_(std::move(options)),
      start_(clock->Now()) {
  core::MutexLock lock(&mu_);
  last_step_ = start_;
}

Controller::~Controller() {
  for (Server& s : servers_) {
    if (s.get.valid()) s.get.wait();
    if (s.put.valid()) s.put.wait();
  }
  if (meter_read_.valid()) meter_read_.wait();
}

void Controller::WaitForCommands() {
  for (Server& s : servers_) {
    if (s.put.valid()) s.put.wait();
  }
}

ordered_json Controller::CollectPuts(core::TimePoint now) {
  ordered_json answers = ordered_json::array();
  for (size_t i = 0; i < servers_.size(); ++i) {
    Server& s = servers_[i];
    if (!Ready(s.put)) continue;
    core::Result<CapsOutcome> outcome = s.put.get();
    ordered_json a = {{"server", s.endpoint.name}, {"request_id", s.put_command.request_id}};
    if (outcome) {
      ++commands_ok_;
      if (s.put_command.targets) row_.Accepted(i, *s.put_command.targets);
      s.last_ack = now;
      s.failures = 0;
      s.put_confirmed = outcome->confirmed || outcome->result == "scheduled";
      a["result"] = outcome->result;
      a["confirmed"] = outcome->confirmed;
      if (!outcome->mismatch.empty()) a["mismatch"] = outcome->mismatch;
      s.error.clear();
    } else {
      ++commands_failed_;
      ++s.failures;
      // Exponential backoff from one period, at most a third of the lease (so a renewal still
      // lands before the lease runs out).
      const double factor = std::pow(2.0, std::min(s.failures - 1, 16));
      const core::Duration backoff = std::min<core::Duration>(
          core::FromSeconds(core::ToSeconds(config_.period) * factor), config_.lease_ttl / 3);
      s.retry_at = now + backoff;
      s.error = outcome.error().message();
      a["result"] = "failed";
      a["error"] = s.error;
      a["retry_in_s"] = core::ToSeconds(backoff);
      spdlog::warn("{}: {} (retry in {:.1f} s)", s.endpoint.name, s.error,
                   core::ToSeconds(backoff));
    }
    answers.push_back(std::move(a));
  }
  return answers;
}

void Controller::PollAgents() {
  for (Server& s : servers_) {
    if (s.get.valid()) continue;  // the previous poll is still out: do not pile up
    AgentLink* link = s.link.get();
    s.get = std::async(std::launch::async, [link] { return link->GetState(); });
  }
  if (meter_ && !meter_read_.valid()) {
    RowMeter* meter = meter_.get();
    meter_read_ = std::async(std::launch::async, [meter] { return meter->Read(); });
  }
  // One deadline for all: a slow agent costs the step agent_timeout, not agent_timeout each.
  // The futures run in real time; the wait is measured on the injected clock.
  const core::TimePoint deadline = clock_->Now() + config_.agent_timeout;
  auto left = [this, deadline] {
    return std::max(core::Duration::zero(), deadline - clock_->Now());
  };
  for (Server& s : servers_) {
    if (s.get.wait_for(left()) != std::future_status::ready) {
      s.reachable = false;
      s.error =
          fmt::format("no answer within {:.0f} ms", core::ToSeconds(config_.agent_timeout) * 1000);
      continue;
    }
    core::Result<AgentReport> report = s.get.get();
    s.reachable = static_cast<bool>(report);
    if (report) {
      s.report = *report;
      if (s.failures == 0) s.error.clear();
    } else {
      s.error = report.error().message();
    }
  }
  if (meter_read_.valid() && meter_read_.wait_for(left()) == std::future_status::ready) {
    core::Result<core::Watts> w = meter_read_.get();
    if (w) {
      meter_value_ = *w;
      meter_time_ = clock_->Now();
      meter_error_.clear();
    } else {
      meter_error_ = w.error().message();
    }
  } else if (meter_read_.valid()) {
    meter_error_ = "the meter did not answer in time";
  }
}

void Controller::NoteUnreachableAtStart(std::vector<std::string>* notes) {
  checked_reachability_ = true;
  int reached = 0;
  for (const Server& s : servers_) {
    if (s.reachable) {
      ++reached;
      continue;
    }
    const std::string line = fmt::format("start: cannot reach the agent of {} at {}: {}",
                                         s.endpoint.name, s.endpoint.url, s.error);
    spdlog::warn("{}", line);
    notes->push_back(line);
  }
  notes->push_back(fmt::format("start: reached {} of {} agents", reached, servers_.size()));
}

policy::ServerReport Controller::ReportOf(const Server& s) {
  policy::ServerReport r;
  r.reachable = s.reachable && s.report.has_value();
  r.command_failed = s.failures > 0;
  r.command_in_flight = s.put.valid();
  r.confirmed = s.put_confirmed;
  if (!r.reachable) return r;
  const AgentReport& a = *s.report;
  r.gpu_power = a.gpu_power;
  r.implausible = a.implausible;
  r.holds = a.caps;
  r.has_lease = a.has_lease;
  r.pending = a.pending;
  r.confirmed = s.put_confirmed && a.confirmed;
  r.serving = a.serving;
  return r;
}

// The policy's view of the row: the meter's last good reading (its age growing while it fails)
// or, before the first one, the servers' conservative sum, flagged.
policy::RowView Controller::ViewOfRow(core::TimePoint now, std::string* source) const {
  policy::RowView view;
  view.now = now - start_;
  view.budget = config_.budget;
  *source = std::string(TelemetrySourceName(config_.telemetry.source));
  if (meter_ && meter_value_ && meter_time_) {
    view.metered = *meter_value_;
    view.telemetry_age = now - *meter_time_;
    if (!meter_error_.empty()) *source += " (last good reading)";
  } else if (meter_) {
    *source = "agents (meter has no reading yet)";
  }
  for (const Server& s : servers_) view.servers.push_back(ReportOf(s));
  return view;
}

void Controller::NoteStep(const policy::RowStep& step, std::vector<std::string>* notes) {
  for (size_t i : step.synced) {
    const Server& s = servers_[i];
    const AgentReport& r = *s.report;
    notes->push_back(
        fmt::format("{}: synced, holds {}", s.endpoint.name, TargetsJson(r.caps).dump()));
    if (!r.priority.empty() && r.priority != policy::PriorityName(s.endpoint.priority)) {
      notes->push_back(fmt::format("{}: agent says priority {}, config says {}", s.endpoint.name,
                                   r.priority, policy::PriorityName(s.endpoint.priority)));
    }
  }
  for (size_t i : step.reasserted) {
    const Server& s = servers_[i];
    const std::string holds = TargetsJson(s.report->caps).dump();
    if (!s.report->has_lease) {
      notes->push_back(fmt::format("{}: holds {} without a lease (restarted?), re-sending",
                                   s.endpoint.name, holds));
      continue;
    }
    // Someone else commanded it: worth a warning, not only a note.
    const std::string line = fmt::format(
        "{}: holds {} under a lease, not what it accepted from this controller (another "
        "controller, a manual PUT or a replayed request?): re-asserting its target",
        s.endpoint.name, holds);
    spdlog::warn("{}", line);
    notes->push_back(line);
  }
  NoteConvergence(step, notes);
  for (size_t i = 0; i < servers_.size(); ++i) {
    Server& s = servers_[i];
    const policy::ServerCount& c = step.counted[i];
    if (c.as == "implausible") {
      if (s.counted.as != "implausible") {
        spdlog::warn("{}: implausible report, counted at its rated maximum: {}", s.endpoint.name,
                     c.why);
      }
      s.error = c.why;
    }
    s.counted = c;
    s.target = step.decision.targets[i];
    s.changed = step.changed[i];
  }
}

void Controller::NoteConvergence(const policy::RowStep& step, std::vector<std::string>* notes) {
  std::vector<bool> unconverged(servers_.size(), false);
  for (size_t i : step.unconverged) unconverged[i] = true;
  for (size_t i = 0; i < servers_.size(); ++i) {
    Server& s = servers_[i];
    if (unconverged[i] && !s.unconverged) {
      const std::string line = fmt::format(
          "{}: holds {}, not its target {}, for {:.0f} s (converge_within): counted as "
          "unconfirmed",
          s.endpoint.name, TargetsJson(s.report->caps).dump(),
          TargetsJson(step.decision.targets[i]).dump(), core::ToSeconds(config_.converge_within));
      spdlog::warn("{}", line);
      notes->push_back(line);
    } else if (!unconverged[i] && s.unconverged) {
      notes->push_back(fmt::format("{}: converged again", s.endpoint.name));
    }
    s.unconverged = unconverged[i];
  }
}

void Controller::Send(core::TimePoint now) {
  for (Server& s : servers_) {
    s.sent.clear();
    if (options_.dry_run || !s.reachable || s.put.valid() || now < s.retry_at) continue;
    CapsCommand command;
    command.lease = config_.lease_ttl;
    if (s.changed) {
      command.targets = s.target;
      s.sent = "caps";
    } else if (!s.last_ack || now - *s.last_ack >= config_.lease_ttl / 3 ||
               (s.report &&
                (s.report->failsafe_active || s.report->lease_expired || !s.report->has_lease))) {
      s.sent = "lease";
    } else {
      continue;
    }
    // The row's name is cut so that a long one cannot push ids past what agents accept.
    command.request_id = fmt::format("{}-{}-{}", config_.row_name.substr(0, kRowNameInRequestId),
                                     options_.instance_id, ++request_seq_);
    // Agents take only printable ASCII without spaces (caps_request.cc); a row may be "row 7".
    std::replace_if(
        command.request_id.begin(), command.request_id.end(),
        [](char c) { return c <= ' ' || c >= 0x7f; }, '_');
    s.put_command = command;
    AgentLink* link = s.link.get();
    s.put = std::async(std::launch::async, [link, command] { return link->PutCaps(command); });
  }
}

ordered_json Controller::ServerJson(size_t i) const {
  const Server& s = servers_[i];
  ordered_json j;
  j["name"] = s.endpoint.name;
  j["priority"] = policy::PriorityName(s.endpoint.priority);
  j["url"] = s.endpoint.url;
  j["reachable"] = s.reachable;
  j["power_w"] = s.reachable && s.report ? ordered_json(Round(s.report->gpu_power.value(), 0.1))
                                         : ordered_json(nullptr);
  j["counted_w"] = Round(s.counted.watts.value(), 0.1);
  j["counted_as"] = s.counted.as;
  j["target"] = TargetsJson(s.target);
  const std::optional<policy::ServerTargets>& accepted = row_.accepted(i);
  j["accepted"] = accepted ? TargetsJson(*accepted) : ordered_json(nullptr);
  j["confirmed"] = !row_.Unconfirmed(i, ReportOf(s));
  j["converged"] = !s.unconverged;
  if (s.reachable && s.report) j["holds"] = TargetsJson(s.report->caps);
  if (s.report) {
    j["agent"] = {{"pending", s.report->pending},
                  {"failsafe_active", s.report->failsafe_active},
                  {"lease_expired", s.report->lease_expired}};
    if (!s.report->confirmed) j["agent"]["mismatch"] = s.report->mismatch;
  }
  j["failures"] = s.failures;
  if (!s.error.empty()) j["error"] = s.error;
  return j;
}

ordered_json Controller::Step() {
  const core::TimePoint now = clock_->Now();
  ordered_json answers = CollectPuts(now);
  PollAgents();
  std::string source;
  const GridBudget::InForce asked = grid_.At(clock_->WallNow());
  policy::RowView view = ViewOfRow(now, &source);
  view.requested = asked.requested;
  view.comply_within = asked.comply_within;
  const policy::RowStep& step = row_.Step(view);
  std::vector<std::string> notes;
  if (!checked_reachability_) NoteUnreachableAtStart(&notes);
  NoteStep(step, &notes);
  Send(now);
  const policy::Decision& decision = step.decision;

  ordered_json record;
  record["t_s"] =
      Round(core::ToSeconds(std::chrono::floor<std::chrono::milliseconds>(view.now)), 0.001);
  record["row_power_w"] = Round(view.metered.value_or(step.servers_sum).value(), 0.1);
  record["budget_w"] = step.budget.value();
  record["budget"] = NoteBudget(step, asked, now, record["row_power_w"].get<double>());
  if (!step.ramp_held.empty()) {
    record["ramp_held"] = ordered_json::array();
    for (size_t i : step.ramp_held) record["ramp_held"].push_back(servers_[i].endpoint.name);
  }
  if (step.load_ramp) {
    spdlog::warn("the row rose faster than grid.ramp_up_w_per_s {:.0f} W/s on its own",
                 config_.grid.ramp_up_w_per_s);
    record["load_ramp"] = true;
  }
  record["fraction"] = Round(decision.fraction, 0.0001);
  record["source"] = source;
  record["telemetry_age_s"] =
      Round(core::ToSeconds(view.metered ? view.telemetry_age : core::Duration::zero()), 0.001);
  if (meter_) {
    record["agents_sum_w"] = Round(step.servers_sum.value(), 0.1);
    if (!meter_error_.empty()) record["meter_error"] = meter_error_;
  }
  record["policy"] = config_.policy_name;
  record["state"] = step.state;
  if (step.holding) record["restart_hold"] = true;
  record["dry_run"] = options_.dry_run;
  record["events"] = ordered_json::array();
  for (const policy::Event& e : decision.events) {
    record["events"].push_back({{"at_s", Round(core::ToSeconds(e.at), 0.001)},
                                {"from", e.from},
                                {"to", e.to},
                                {"reason", e.reason}});
    spdlog::info("{} -> {}: {}", e.from, e.to, e.reason);
  }
  if (!notes.empty()) record["notes"] = notes;
  for (const std::string& n : notes) spdlog::info("{}", n);
  record["servers"] = ordered_json::array();
  for (const Server& s : servers_) {
    ordered_json j = {{"name", s.endpoint.name},
                      {"reachable", s.reachable},
                      {"counted_w", Round(s.counted.watts.value(), 0.1)},
                      {"counted_as", s.counted.as},
                      {"target", TargetsJson(s.target)}};
    if (!s.sent.empty()) j["sent"] = s.sent;
    if (s.unconverged) j["unconverged"] = true;
    if (!s.error.empty()) j["error"] = s.error;
    record["servers"].push_back(std::move(j));
  }
  record["answers"] = std::move(answers);
  if (std::vector<ordered_json> requests = grid_.TakeAudit(); !requests.empty()) {
    record["budget_requests"] = std::move(requests);
  }
  Publish(record);
  return record;
}

ordered_json Controller::NoteBudget(const policy::RowStep& step, const GridBudget::InForce& asked,
                                    core::TimePoint now, double row_w) {
  ordered_json j = {{"provisioned_w", config_.budget.value()},
                    {"in_force_w", step.budget.value()},
                    {"source", asked.source}};
  if (!asked.reason.empty()) j["reason"] = asked.reason;
  if (asked.until) j["until"] = FormatUtcTime(*asked.until);
  j["brake_guards_w"] = step.brake_budget.value();
  j["ramp_held"] = step.ramp_held.size();
  j["complying"] = step.complying;
  const bool lowered = step.budget < config_.budget;
  if (!lowered) {
    lowered_at_.reset();
    return j;
  }
  // A new lowered budget (or a lower one): its compliance is measured afresh.
  if (!lowered_at_ || step.budget != lowered_to_) {
    lowered_at_ = now;
    lowered_to_ = step.budget;
    compliance_ = {};
    last_budget_sample_ = now;
  }
  const double period_s = core::ToSeconds(now - *last_budget_sample_);
  last_budget_sample_ = now;
  const double since_s = core::ToSeconds(now - *lowered_at_);
  if (period_s > 0) {
    compliance_.Meter(since_s, row_w, period_s, step.budget.value(),
                      core::ToSeconds(asked.comply_within), 0);
  }
  j["lowered_for_s"] = Round(since_s, 0.001);
  if (compliance_.complied_after_s) j["complied_after_s"] = *compliance_.complied_after_s;
  j["over_after_deadline_s"] = compliance_.over_after_deadline_s;
  return j;
}

void Controller::BudgetMetrics(const ordered_json& budget, telemetry::PrometheusWriter& m) const {
  m.Family("headroom_row_budget_watts", "gauge",
           "The row's power budget in force: the provisioned one, or a lower one the grid asks "
           "for (schedule or signal).");
  m.Sample(budget["in_force_w"].get<double>());
  m.Family("headroom_row_provisioned_budget_watts", "gauge", "The row's provisioned budget.");
  m.Sample(config_.budget.value());
  m.Family("headroom_row_brake_budget_watts", "gauge",
           "The budget the brake guards: the one in force, or the one before a lowered budget "
           "while its time to comply runs.");
  m.Sample(budget["brake_guards_w"].get<double>());
  m.Family("headroom_row_budget_lowered", "gauge",
           "1 while the grid asks for less than the provisioned budget, by source.");
  for (const char* source : {"schedule", "signal"}) {
    m.Sample(budget["source"] == source ? 1 : 0, {{"source", source}});
  }
  m.Family("headroom_row_budget_complying", "gauge",
           "1 while a lowered budget is within its time to comply.");
  m.Sample(budget["complying"].get<bool>() ? 1 : 0);
  m.Family("headroom_row_budget_over_after_deadline_seconds", "gauge",
           "Metered time over the lowered budget in force after its time to comply.");
  m.Sample(budget.value("over_after_deadline_s", 0.0));
  m.Family("headroom_row_ramp_held_servers", "gauge",
           "Servers whose lift this step waits for the ramp limit (grid.ramp_up_w_per_s).");
  m.Sample(static_cast<double>(budget.value("ramp_held", 0)));
  m.Family("headroom_row_load_ramps_total", "counter",
           "Times the row rose faster than the ramp limit with no lift of the controller's.");
  m.Sample(static_cast<double>(row_.load_ramps()));
  m.Family("headroom_row_budget_requests_total", "counter",
           "PUT and DELETE /v1/budget requests that passed the token check, by result.");
  m.Sample(static_cast<double>(grid_.accepted()), {{"result", "accepted"}});
  m.Sample(static_cast<double>(grid_.refused()), {{"result", "refused"}});
}

telemetry::PrometheusWriter Controller::MetricsOf(const ordered_json& record) const {
  telemetry::PrometheusWriter m;
  // No row label: Prometheus adds it from the scrape target (deploy/prometheus/).
  m.Family("headroom_row_power_watts", "gauge", "Row power the policy read this step.");
  m.Sample(record["row_power_w"].get<double>());
  BudgetMetrics(record["budget"], m);
  m.Family("headroom_row_power_ratio", "gauge", "Row power over budget (p).");
  m.Sample(record["fraction"].get<double>());
  m.Family("headroom_row_threshold_ratio", "gauge",
           "The policy's thresholds as fractions of budget.");
  m.Sample(config_.params.t1, {{"threshold", "t1"}});
  m.Sample(config_.params.t2, {{"threshold", "t2"}});
  m.Sample(config_.params.brake_threshold, {{"threshold", "brake"}});
  m.Family("headroom_row_state", "gauge", "1 for the policy's current state.");
  std::vector<std::string> states = row_.policy().states();
  states.push_back("escalated");
  const std::string current = record["state"].get<std::string>();
  for (const std::string& st : states) m.Sample(st == current ? 1 : 0, {{"state", st}});
  m.Family("headroom_row_brake_events_total", "counter",
           "Times the row entered the brake (policy or escalation).");
  m.Sample(static_cast<double>(row_.brake_events()));
  m.Family("headroom_row_server_sm_clock_cap_hertz", "gauge",
           "SM clock cap targeted per server (capped servers only).");
  for (const Server& s : servers_) {
    if (!s.target.sm_clock_cap) continue;
    m.Sample(s.target.sm_clock_cap->value() * 1e6,
             {{"server", s.endpoint.name},
              {"priority", std::string(policy::PriorityName(s.endpoint.priority))}});
  }
  auto per_server = [this, &m](const char* name, const char* help, auto value) {
    m.Family(name, "gauge", help);
    for (const Server& s : servers_) m.Sample(value(s) ? 1 : 0, {{"server", s.endpoint.name}});
  };
  per_server("headroom_row_server_brake", "1 while a server is asked to brake.",
             [](const Server& s) { return s.target.brake; });
  per_server("headroom_row_agent_implausible",
             "1 when the agent's report broke its server's physics and it was counted at its "
             "rated maximum.",
             [](const Server& s) { return s.counted.as == "implausible"; });
  per_server("headroom_row_agent_up", "1 when the agent answered this step.",
             [](const Server& s) { return s.reachable; });
  per_server("headroom_row_server_unconverged",
             "1 while a reachable agent has held caps other than its target for converge_within.",
             [](const Server& s) { return s.unconverged; });
  m.Family("headroom_row_telemetry_age_seconds", "gauge",
           "Age of the row power reading the policy used (0 for the agents' sum).");
  m.Sample(record["telemetry_age_s"].get<double>());
  m.Family("headroom_row_dry_run", "gauge", "1 when the controller decides but sends nothing.");
  m.Sample(options_.dry_run ? 1 : 0);
  m.Family("headroom_row_escalated", "gauge",
           "1 while every server is braked because caps did not take over budget.");
  m.Sample(row_.escalated() ? 1 : 0);
  m.Family("headroom_row_commands_total", "counter", "Caps and lease commands by outcome.");
  m.Sample(static_cast<double>(commands_ok_), {{"result", "ok"}});
  m.Sample(static_cast<double>(commands_failed_), {{"result", "failed"}});
  m.Family("headroom_row_audit_lines_lost_total", "counter",
           "Audit records that could not be written (disk full); control went on.");
  m.Sample(static_cast<double>(audit_lines_lost_));

  return m;
}

void Controller::Publish(const ordered_json& record) {
  ordered_json status;
  status["row"] = config_.row_name;
  status["policy"] = config_.policy_name;
  status["state"] = record["state"];
  status["dry_run"] = options_.dry_run;
  for (const char* key :
       {"t_s", "row_power_w", "budget_w", "fraction", "source", "telemetry_age_s"}) {
    status[key] = record[key];
  }
  status["thresholds"] = {{"t1", config_.params.t1},
                          {"t2", config_.params.t2},
                          {"brake", config_.params.brake_threshold}};
  status["brake_events"] = row_.brake_events();
  status["budget"] = record["budget"];
  status["servers"] = ordered_json::array();
  for (size_t i = 0; i < servers_.size(); ++i) status["servers"].push_back(ServerJson(i));

  telemetry::PrometheusWriter m = MetricsOf(record);
  const core::TimePoint now = clock_->Now();
  core::MutexLock lock(&mu_);
  ++steps_;
  last_step_ = now;
  status["steps"] = steps_;
  m.Family("headroom_row_decisions_total", "counter", "Control steps taken.");
  m.Sample(static_cast<double>(steps_));
  status_ = std::move(status);
  metrics_ = m.text();
  // Lost after the metrics above were built: counted from the next step on.
  if (options_.audit && !options_.audit(record)) ++audit_lines_lost_;
}

ordered_json Controller::Status() const {
  core::MutexLock lock(&mu_);
  if (status_.is_null()) {
    return {{"row", config_.row_name}, {"state", "starting"}, {"steps", 0}};
  }
  return status_;
}

core::Result<ordered_json> Controller::PutBudget(std::string_view body) {
  return grid_.Put(body, clock_->WallNow());
}

core::Result<ordered_json> Controller::DeleteBudget() { return grid_.Delete(clock_->WallNow()); }

ordered_json Controller::Budget() const {
  ordered_json j = grid_.Json(clock_->WallNow());
  core::MutexLock lock(&mu_);
  // How the row is meeting it, as of the last step.
  if (status_.contains("budget")) j["last_step"] = status_["budget"];
  return j;
}

std::string Controller::Metrics() const {
  core::MutexLock lock(&mu_);
  return metrics_;
}

core::Duration Controller::SinceLastStep() const {
  const core::TimePoint now = clock_->Now();
  core::MutexLock lock(&mu_);
  return now - last_step_;
}

std::uint64_t Controller::steps() const {
  core::MutexLock lock(&mu_);
  return steps_;
}

core::Result<std::unique_ptr<RowMeter>> MakeRowMeter(const TelemetryConfig& t,
                                                     const std::string& ca_file,
                                                     const core::Clock* clock) {
  switch (t.source) {
    case TelemetrySource::kAgents:
      return std::unique_ptr<RowMeter>();
    case TelemetrySource::kPrometheus:
      return std::unique_ptr<RowMeter>(
          std::make_unique<PrometheusMeter>(t.url, t.query, t.timeout, ca_file));
    case TelemetrySource::kCommand:
      return std::unique_ptr<RowMeter>(std::make_unique<CommandMeter>(t.command, t.timeout, clock));
  }
  return core::Fail(core::Error::Internal("unknown telemetry source"));
}

std::string NewInstanceId(const core::Clock& clock) {
  const auto seconds =
      std::chrono::duration_cast<std::chrono::seconds>(clock.WallNow().time_since_epoch());
  return fmt::format("{}.{}.{:08x}", seconds.count(), ::getpid(), std::random_device{}());
}

void RunControlLoop(Controller& controller, core::Clock& clock, core::Duration period,
                    const std::atomic<bool>& stop) {
  const core::TimePoint start = clock.Now();
  for (std::int64_t k = 1; !stop.load(); ++k) {
    (void)controller.Step();
    core::TimePoint next = start + k * period;
    if (next < clock.Now()) {
      const std::int64_t skipped = (clock.Now() - next) / period;
      k += skipped + 1;
      next = start + k * period;
      spdlog::warn("a step overran its period; skipping {} step(s)", skipped + 1);
    }
    clock.SleepUntil(next, &stop);
  }
}

}  // namespace headroom::service
