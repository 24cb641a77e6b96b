// The twin test: one row, one workload, the two controllers that headroom ships. (a) The row
// simulator on six servers (three HP, three LP) serving an hour of the real Azure traces, its
// budget set so that the row crosses T1, T2 and the brake. (b) The controller daemon's
// service::Controller driving six real service::Agents over simulated GPUs, all on one FakeClock
// in one process, its row meter replaying the row power the simulator metered at each step.
// Given the same power, the two must decide the same: the same (time, server, target) sequence
// and the same brake events. Actuation delays are equal for caps and the brake (the agent has
// one delay for every control). A second case takes one agent away for two minutes, in both.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include "catalog/hardware_catalog.h"
#include "core/time.h"
#include "gpu/sim/sim_device.h"
#include "policy/energy_saver.h"
#include "policy/policy_factory.h"
#include "policy/policy_params.h"
#include "service/agent.h"
#include "service/agent_link.h"
#include "service/controller.h"
#include "sim/capacity_planner.h"
#include "sim/row_simulator.h"
#include "sim/scenario.h"
#include "sim/scenario_run.h"
#include "sim/workload.h"
#include "telemetry/engine_histogram.h"

namespace headroom {
namespace {

using std::chrono::seconds;

constexpr int kServers = 6;

// One decision: server `server`'s target changed at `at_ms`.
struct Change {
  long long at_ms = 0;
  int server = 0;
  policy::ServerTargets targets;
  bool operator==(const Change&) const = default;
};

std::string Describe(const Change& c) {
  return fmt::format("{} ms server {}: clock {} power {} brake {}", c.at_ms, c.server,
                     c.targets.sm_clock_cap ? c.targets.sm_clock_cap->value() : -1,
                     c.targets.power_limit ? c.targets.power_limit->value() : -1, c.targets.brake);
}

// The first difference of two decision sequences, or "" when they are the same.
std::string FirstDifference(const std::vector<Change>& a, const std::vector<Change>& b) {
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    if (!(a[i] == b[i])) {
      return fmt::format("decision {}: simulator {} / daemon {}", i, Describe(a[i]),
                         Describe(b[i]));
    }
  }
  if (a.size() != b.size()) {
    const std::vector<Change>& longer = a.size() > b.size() ? a : b;
    return fmt::format("{} vs {} decisions; the first extra one ({}): {}", a.size(), b.size(),
                       a.size() > b.size() ? "simulator" : "daemon",
                       Describe(longer[std::min(a.size(), b.size())]));
  }
  return "";
}

// An agent in the same process, spoken to through the protocol's own codecs; unreachable while
// `down` says so. When `gpu_w` is given, the report carries that GPU power (the simulator's for
// the server, which its one simulated GPU here does not draw).
class InProcessLink final : public service::AgentLink {
 public:
  InProcessLink(service::Agent* agent, const bool* down, const double* gpu_w = nullptr)
      : agent_(agent), down_(down), gpu_w_(gpu_w) {}
  core::Result<service::AgentReport> GetState() override {
    if (*down_) return core::Fail(core::Error::Unavailable("down"));
    auto report = service::ParseAgentState(nlohmann::json::parse(agent_->State().dump()));
    if (report && gpu_w_ != nullptr) report->gpu_power = core::Watts(*gpu_w_);
    return report;
  }
  core::Result<service::CapsOutcome> PutCaps(const service::CapsCommand& command) override {
    if (*down_) return core::Fail(core::Error::Unavailable("down"));
    auto answer = agent_->PutCaps(service::CapsBody(command));
    if (!answer) return core::Fail(answer.error());
    return service::ParseCapsOutcome(nlohmann::json::parse(answer->dump()));
  }

 private:
  service::Agent* agent_;
  const bool* down_;
  const double* gpu_w_;
};

// Row power as the simulator metered it, one reading per step.
class ReplayMeter final : public service::RowMeter {
 public:
  explicit ReplayMeter(const double* watts) : watts_(watts) {}
  core::Result<core::Watts> Read() override { return core::Watts(*watts_); }
  std::string Describe() const override { return "replay"; }

 private:
  const double* watts_;
};

// A server unreachable from `from` for `length` (in both twins).
struct Outage {
  int server = 0;
  core::Duration from{0};
  core::Duration length{0};
  bool Covers(core::Duration t) const { return t >= from && t < from + length; }
};

class TwinTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto resolved = sim::LoadAndResolveBuiltIn(sim::kDefaultScenario);
    ASSERT_TRUE(resolved) << resolved.error().message();
    scenario_ = std::make_unique<sim::ResolvedScenario>(std::move(*resolved));
    row_ = scenario_->row;
    row_.servers = kServers;
    row_.power.in_band = false;
    SetActuationDelay(seconds(2));
    spdlog::set_level(spdlog::level::warn);  // the controller logs every state change
    row_.control.brake_release = scenario_->params.brake_release;
    dir_ = std::filesystem::temp_directory_path() / fmt::format("headroom-twin-{}", getpid());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The energy saver on every server of the simulator and on real agents fed its engines'
  // windows: the same clock after every window (the tests below).
  void StepSaversAlike(double itl_slo_s, double ttft_slo_s, bool prefill_boost);
  sim::RowResult Simulate(const std::string& policy, const std::vector<Outage>& outages) {
    auto source = sim::MakeWorkload(scenario_->scenario, "azure", kServers,
                                    sim::HpServers(kServers, row_.hp_server_fraction),
                                    scenario_->scenario.seed);
    EXPECT_TRUE(source) << source.error().message();
    auto p = policy::MakePolicy(policy, scenario_->params);
    EXPECT_TRUE(p);
    sim::RunOptions options;
    options.keep_target_changes = true;
    views_.clear();
    if (replay_servers_) {
      options.on_control_view = [this](const policy::RowView& v) { views_.push_back(v); };
    }
    for (const Outage& o : outages) {
      options.unreachable.push_back({.server = o.server, .from = o.from, .length = o.length});
    }
    options.outside_commands = outside_;
    if (restart_at_) {
      options.restart_controller_at = *restart_at_;
      options.make_policy = [this, policy] {
        return *policy::MakePolicy(policy, scenario_->params);
      };
    }
    auto result = sim::SimulateRow(row_, **source, **p, options);
    EXPECT_TRUE(result) << result.error().message();
    return std::move(*result);
  }

  static std::vector<Change> SimulatorDecisions(const sim::RowResult& r) {
    std::vector<Change> out;
    for (const auto& c : r.target_changes) {
      out.push_back({std::chrono::duration_cast<std::chrono::milliseconds>(c.at).count(), c.server,
                     c.targets});
    }
    return out;
  }

  // The daemon's controller and agents through the simulator's metered power; its decisions
  // (from the audit records) and its brake events.
  std::pair<std::vector<Change>, std::uint64_t> RunDaemon(const sim::RowResult& simulated,
                                                          const std::vector<Outage>& outages) {
    core::FakeClock clock;
    const model::GpuSpec& spec = row_.model->gpu().spec();
    std::vector<std::vector<std::unique_ptr<gpu::Device>>> devices;
    std::vector<std::unique_ptr<service::Agent>> agents;
    bool down[kServers] = {};
    service::ControllerConfig config;
    config.row_name = "twin";
    config.budget = row_.power.budget;
    config.policy_name = simulated.policy;
    config.gpu = spec;  // as the row file's servers name it in the catalog (ControllerConfig)
    config.params = scenario_->params;
    config.restart_hold = row_.control.restart_hold;
    config.escalate_after = row_.control.escalate_after;
    config.telemetry.source = service::TelemetrySource::kCommand;
    // The grid's daily windows on the daemon's calendar clock, which the fake clock starts at
    // the epoch's midnight: the simulator's day 0.
    config.grid.schedule = row_.power.budget_schedule;
    config.grid.ramp_up_w_per_s = row_.control.ramp_up_w_per_s;
    config.grid.ramp_window = row_.control.ramp_window;
    for (int s = 0; s < kServers; ++s) {
      const bool hp = sim::HpServers(s + 1, row_.hp_server_fraction) >
                      sim::HpServers(s, row_.hp_server_fraction);
      // One simulated GPU a server: the row's power comes from the replayed meter, so the
      // agents' GPUs only carry the caps (eight would cost four times the test's time).
      devices.push_back(gpu::sim::CreateSimDevices(spec, 1, &clock, {}));
      std::vector<service::AgentGpu> gpus;
      for (const auto& d : devices.back()) {
        gpus.push_back(
            {.device = d.get(), .spec = spec, .failsafe_clock = scenario_->params.lp_t2_clock});
      }
      service::AgentOptions options{.state_file = (dir_ / fmt::format("a{}.json", s)).string(),
                                    .priority = hp ? "hp" : "lp",
                                    .backend = "sim",
                                    .actuation_delay = delay_,
                                    .sample_interval = seconds(1)};
      auto agent = service::Agent::Create(std::move(gpus), options, &clock);
      EXPECT_TRUE(agent) << agent.error().message();
      agents.push_back(std::move(*agent));
      config.agents.push_back(
          {.name = fmt::format("s{}", s),
           .url = "in-process",
           .token = "t",
           .priority = hp ? policy::ServerPriority::kHigh : policy::ServerPriority::kLow,
           .server = row_.server});
    }
    double metered = 0;
    std::vector<double> gpu_w(kServers, 0);
    // The engines' windows as the agents scrape them: token counters that give the simulator's
    // prefill share over each of its windows.
    std::vector<service::EngineSample> engine(kServers);
    // Audit records with the time since the first controller's start (a restarted controller
    // counts its own time from zero).
    std::vector<std::pair<double, nlohmann::ordered_json>> audit;
    double started_s = 0;
    auto start_controller = [&] {
      std::vector<std::unique_ptr<service::AgentLink>> links;
      for (int s = 0; s < kServers; ++s) {
        links.push_back(std::make_unique<InProcessLink>(agents[s].get(), &down[s],
                                                        replay_servers_ ? &gpu_w[s] : nullptr));
      }
      service::ControllerOptions options;
      options.audit = [&audit, &started_s](const nlohmann::ordered_json& line) {
        audit.emplace_back(started_s, line);
        return true;
      };
      auto c = service::Controller::Create(
          config, std::move(links), std::make_unique<ReplayMeter>(&metered), &clock, options);
      EXPECT_TRUE(c) << c.error().message();
      return std::move(*c);
    };
    std::unique_ptr<service::Controller> controller = start_controller();
    std::uint64_t brake_events = 0;
    size_t outside_sent = 0;
    const core::TimePoint start = clock.Now();
    // The simulator's last sample ends the run and drives no step.
    for (size_t k = 0; k + 1 < simulated.power.size(); ++k) {
      const sim::PowerSample& p = simulated.power[k];
      const core::TimePoint at = start + core::FromSeconds(p.time_s);
      clock.Advance(at - clock.Now());
      if (restart_at_ && started_s == 0 && at - start >= *restart_at_) {
        brake_events += controller->Status()["brake_events"].get<std::uint64_t>();
        controller.reset();
        started_s = core::ToSeconds(at - start);
        controller = start_controller();
      }
      for (const Outage& o : outages) down[o.server] = o.Covers(at - start);
      for (auto& a : agents) a->Tick();
      for (; outside_sent < outside_.size() && outside_[outside_sent].at <= at - start;
           ++outside_sent) {
        PutFromOutside(*agents[static_cast<size_t>(outside_[outside_sent].server)],
                       outside_[outside_sent], outside_sent);
      }
      metered = p.row_w;
      if (replay_servers_) ReplayServers(k, agents, gpu_w, engine);
      controller->Step();
      controller->WaitForCommands();
    }
    brake_events += controller->Status()["brake_events"].get<std::uint64_t>();
    daemon_reasserted_.clear();
    for (const auto& [offset_s, line] : audit) {
      for (const auto& note : line.value("notes", nlohmann::ordered_json::array())) {
        for (int s = 0; s < kServers; ++s) {
          const std::string text = note.get<std::string>();
          if (text.starts_with(fmt::format("s{}: holds", s)) &&
              text.find("re-asserting") != std::string::npos) {
            daemon_reasserted_.push_back(
                {std::llround((offset_s + line["t_s"].get<double>()) * 1000), s, {}});
          }
        }
      }
    }
    std::vector<Change> changes;
    std::vector<nlohmann::ordered_json> last(kServers, service::TargetsJson({}));
    for (const auto& [offset_s, line] : audit) {
      for (int s = 0; s < kServers; ++s) {
        const nlohmann::ordered_json& t = line["servers"][s]["target"];
        if (t == last[s]) continue;
        last[s] = t;
        changes.push_back({std::llround((offset_s + line["t_s"].get<double>()) * 1000), s,
                           *service::TargetsFromJson(t)});
      }
    }
    for (auto& a : agents) EXPECT_TRUE(a->Shutdown());
    return {changes, brake_events};
  }

  // Step k's GPU power and engine windows of the simulator's servers, given to the daemon's
  // agents: a window that ended at this step becomes a scrape (the first step scrapes the
  // counters' start).
  void ReplayServers(size_t k, std::vector<std::unique_ptr<service::Agent>>& agents,
                     std::vector<double>& gpu_w, std::vector<service::EngineSample>& engine) {
    ASSERT_LT(k, views_.size());
    for (int s = 0; s < kServers; ++s) {
      const policy::ServerReport& r = views_[k].servers[static_cast<size_t>(s)];
      gpu_w[static_cast<size_t>(s)] = r.gpu_power.value();
      service::EngineSample& e = engine[static_cast<size_t>(s)];
      if (k == 0) {
        agents[static_cast<size_t>(s)]->RecordEngineScrape(e);
      } else if (r.serving && r.serving->age == core::Duration::zero()) {
        e.prompt_tokens += 1000 * r.serving->prefill_share;
        e.generation_tokens += 1000 * (1 - r.serving->prefill_share);
        e.running = r.serving->running;
        e.waiting = r.serving->waiting;
        agents[static_cast<size_t>(s)]->RecordEngineScrape(e);
      }
    }
  }

  // A PUT that is not the controller's (another controller, a person): a long lease of its own.
  static void PutFromOutside(service::Agent& agent, const sim::RunOptions::OutsideCommand& c,
                             size_t n) {
    const service::CapsCommand command{.targets = c.targets,
                                       .lease = std::chrono::hours(1),
                                       .request_id = fmt::format("outside-{}", n)};
    auto answer = agent.PutCaps(service::CapsBody(command));
    EXPECT_TRUE(answer) << answer.error().message();
  }

  static std::vector<Change> SimulatorReasserted(const sim::RowResult& r) {
    std::vector<Change> out;
    for (const auto& c : r.reasserted) {
      out.push_back(
          {std::chrono::duration_cast<std::chrono::milliseconds>(c.at).count(), c.server, {}});
    }
    return out;
  }

  // The agent has one delay for every control: the simulator's cap and brake delays alike.
  void SetActuationDelay(core::Duration d) {
    delay_ = d;
    row_.power.cap_delay = d;
    row_.power.brake_delay = d;
  }

  // A budget at which the uncapped row peaks at `peak_fraction` of it.
  void SetBudgetForPeak(double peak_fraction) {
    const sim::RowResult uncapped = Simulate("none", {});
    row_.power.budget = core::Watts(uncapped.peak_w / peak_fraction);
  }

  std::unique_ptr<sim::ResolvedScenario> scenario_;
  sim::RowConfig row_;
  core::Duration delay_{0};
  std::optional<core::Duration> restart_at_;  // the controller restarts then, in both twins
  // The daemon's servers report the simulator's GPU power and engine windows (what a policy
  // that ranks servers reads), from what the simulator showed its controller each step.
  bool replay_servers_ = false;
  std::vector<policy::RowView> views_;
  std::vector<sim::RunOptions::OutsideCommand> outside_;  // in both twins
  std::vector<Change> daemon_reasserted_;  // the last RunDaemon's re-assertions (no targets)
  std::filesystem::path dir_;
};

TEST_F(TwinTest, SimulatorAndDaemonDecideTheSameOnAnHourOfAzureTraces) {
  SetBudgetForPeak(1.08);
  const sim::RowResult simulated = Simulate("polca", {});
  // The hour crosses every threshold, or the test would prove little.
  std::vector<std::string> visited;
  for (const policy::Event& e : simulated.events) visited.push_back(e.to);
  for (const char* state : {"t1", "t2", "brake"}) {
    EXPECT_NE(std::find(visited.begin(), visited.end(), state), visited.end()) << state;
  }
  EXPECT_GT(simulated.brake_events, 0u);
  const auto [daemon, daemon_brakes] = RunDaemon(simulated, {});
  const std::vector<Change> twin = SimulatorDecisions(simulated);
  EXPECT_GT(twin.size(), 10u);
  EXPECT_EQ(FirstDifference(twin, daemon), "");
  EXPECT_EQ(daemon_brakes, simulated.brake_events);
}

// Caps that take 20 s (the brake too): over budget while they are still on their way (a budget
// the uncapped row overshoots by 15%), both escalate to braking every server after escalate_after
// (10 s) and release below brake_release.
TEST_F(TwinTest, SimulatorAndDaemonEscalateAlikeWhenCapsTakeLong) {
  SetActuationDelay(seconds(20));
  SetBudgetForPeak(1.15);
  const sim::RowResult simulated = Simulate("polca", {});
  const bool escalated = std::any_of(simulated.events.begin(), simulated.events.end(),
                                     [](const policy::Event& e) { return e.to == "escalated"; });
  EXPECT_TRUE(escalated) << "the case must exercise escalation";
  const auto [daemon, daemon_brakes] = RunDaemon(simulated, {});
  EXPECT_EQ(FirstDifference(SimulatorDecisions(simulated), daemon), "");
  EXPECT_EQ(daemon_brakes, simulated.brake_events);
}

// The controller restarted, with a 30 s restart hold, at a moment when the row holds T1 caps by
// hysteresis alone (p below T1): a fresh policy would lift them at once, the hold keeps them in
// both twins, then the fresh policy takes over. The caps have taken by then (the last change
// is more than an actuation delay old): while a change is on its way, the simulator's servers
// report what was asked and the daemon's agents what they apply, so a restart then is not a
// twin case (docs/architecture.md).
TEST_F(TwinTest, SimulatorAndDaemonAgreeAcrossAControllerRestart) {
  SetBudgetForPeak(1.08);
  row_.control.restart_hold = seconds(30);
  const sim::RowResult plain = Simulate("polca", {});
  const std::vector<Change> changes = SimulatorDecisions(plain);
  const auto settled = [&](double t_s) {
    long long last_ms = -1'000'000;
    for (const Change& c : changes) {
      if (c.at_ms <= std::llround(t_s * 1000)) last_ms = c.at_ms;
    }
    return t_s * 1000 - static_cast<double>(last_ms) > core::ToSeconds(delay_) * 1000 + 1000;
  };
  for (const sim::PowerSample& p : plain.power) {
    if (plain.states[p.state] == "t1" && p.row_w < scenario_->params.t1 * plain.budget_w &&
        settled(p.time_s)) {
      restart_at_ = core::FromSeconds(p.time_s);
      break;
    }
  }
  ASSERT_TRUE(restart_at_.has_value());
  const sim::RowResult simulated = Simulate("polca", {});
  const auto [daemon, daemon_brakes] = RunDaemon(simulated, {});
  EXPECT_EQ(FirstDifference(SimulatorDecisions(simulated), daemon), "");
  EXPECT_EQ(daemon_brakes, simulated.brake_events);
}

// Finding 1 of issue 44: while the row is braked, a PUT from outside lifts every server's caps
// and brake under a lease of its own. Both twins find it in what the servers then hold, send the
// targets again at the same steps, and decide the same from there on.
TEST_F(TwinTest, SimulatorAndDaemonReassertCapsLiftedFromOutside) {
  SetBudgetForPeak(1.08);
  const sim::RowResult plain = Simulate("polca", {});
  std::optional<double> braked_s;
  for (const sim::PowerSample& p : plain.power) {
    if (plain.states[p.state] == "brake" && p.time_s > 60) {
      braked_s = p.time_s;
      break;
    }
  }
  ASSERT_TRUE(braked_s.has_value()) << "the hour never braked";
  for (int s = 0; s < kServers; ++s) {
    outside_.push_back({.server = s, .at = core::FromSeconds(*braked_s + 2), .targets = {}});
  }
  const sim::RowResult simulated = Simulate("polca", {});
  const std::vector<Change> reasserted = SimulatorReasserted(simulated);
  EXPECT_FALSE(reasserted.empty()) << "the simulator never re-asserted";
  const auto [daemon, daemon_brakes] = RunDaemon(simulated, {});
  EXPECT_EQ(FirstDifference(reasserted, daemon_reasserted_), "");
  EXPECT_EQ(FirstDifference(SimulatorDecisions(simulated), daemon), "");
  EXPECT_EQ(daemon_brakes, simulated.brake_events);
}

// Server 1 (LP) unreachable for two minutes while the row is capped: both count it at its rated
// maximum, neither sends it anything, and both catch it up when it is back.
TEST_F(TwinTest, SimulatorAndDaemonAgreeWhenAnAgentIsLostForAWhile) {
  SetBudgetForPeak(1.08);
  const std::vector<Outage> outages = {{.server = 1, .from = seconds(900), .length = seconds(120)}};
  const sim::RowResult simulated = Simulate("polca", outages);
  const auto [daemon, daemon_brakes] = RunDaemon(simulated, outages);
  EXPECT_EQ(FirstDifference(SimulatorDecisions(simulated), daemon), "");
  EXPECT_EQ(daemon_brakes, simulated.brake_events);
}

// mix-aware ranks servers by their engines' prefill share and queue and counts their GPU power:
// the daemon's agents report the simulator's (the windows through the agents' own engine
// scrapes, /v1/state and the controller's parse), and the two decide the same, server by server.
TEST_F(TwinTest, SimulatorAndDaemonAgreeUnderMixAwareOnEngineSignals) {
  SetBudgetForPeak(1.08);
  replay_servers_ = true;
  const sim::RowResult simulated = Simulate("mix-aware", {});
  std::vector<std::string> visited;
  for (const policy::Event& e : simulated.events) visited.push_back(e.to);
  EXPECT_NE(std::find(visited.begin(), visited.end(), "lp"), visited.end());
  // At some moment some LP servers but not all were capped: the ranking decided which.
  const std::vector<Change> twin = SimulatorDecisions(simulated);
  std::vector<bool> capped(kServers, false);
  bool partial = false;
  for (const Change& c : twin) {
    capped[static_cast<size_t>(c.server)] = c.targets.sm_clock_cap.has_value();
    int lp = 0, lp_capped = 0;
    for (int s = 0; s < kServers; ++s) {
      if (sim::HpServers(s + 1, row_.hp_server_fraction) >
          sim::HpServers(s, row_.hp_server_fraction)) {
        continue;
      }
      ++lp;
      lp_capped += capped[static_cast<size_t>(s)] ? 1 : 0;
    }
    partial = partial || (lp_capped > 0 && lp_capped < lp);
  }
  EXPECT_TRUE(partial) << "the hour never capped only some LP servers";
  const bool signalled = std::any_of(views_.begin(), views_.end(), [](const policy::RowView& v) {
    return std::all_of(v.servers.begin(), v.servers.end(),
                       [](const policy::ServerReport& r) { return r.serving.has_value(); });
  });
  EXPECT_TRUE(signalled) << "no step where every server reported an engine window";
  EXPECT_GT(twin.size(), 10u);
  const auto [daemon, daemon_brakes] = RunDaemon(simulated, {});
  EXPECT_EQ(FirstDifference(twin, daemon), "");
  EXPECT_EQ(daemon_brakes, simulated.brake_events);
}

// The grid lowers the row's budget by 15% for 20 minutes, to be met within 30 s: both twins see
// it at the same step, cap to meet it with the brake guarding the provisioned budget meanwhile,
// and go back when it ends (issue 50).
TEST_F(TwinTest, SimulatorAndDaemonMeetALoweredBudgetAlike) {
  SetBudgetForPeak(1.0);
  auto schedule = policy::BudgetSchedule::Make({{.start = std::chrono::minutes(20),
                                                 .length = std::chrono::minutes(20),
                                                 .daily = true,
                                                 .shed = 0.15,
                                                 .comply_within = seconds(30),
                                                 .reason = "demand response"}});
  ASSERT_TRUE(schedule) << schedule.error().message();
  row_.power.budget_schedule = *schedule;
  const sim::RowResult simulated = Simulate("polca", {});
  ASSERT_EQ(simulated.budget_events.size(), 1u);
  // The lowered budget made the row cap where it otherwise would not have.
  const std::vector<Change> twin = SimulatorDecisions(simulated);
  const bool capped_in_event = std::any_of(twin.begin(), twin.end(), [](const Change& c) {
    return c.at_ms >= 1'200'000 && c.at_ms < 1'230'000 && c.targets.sm_clock_cap.has_value();
  });
  EXPECT_TRUE(capped_in_event) << "the lowered budget must make the row act";
  const auto [daemon, daemon_brakes] = RunDaemon(simulated, {});
  EXPECT_EQ(FirstDifference(twin, daemon), "");
  EXPECT_EQ(daemon_brakes, simulated.brake_events);
}

// A ramp limit of 500 W/s over 10 s: both twins lift caps and the brake in the same steps, the
// lifts beyond what the window allows held back alike (the release of a lift is counted from the
// server's reported GPU power, so the daemon's agents report the simulator's).
TEST_F(TwinTest, SimulatorAndDaemonReleaseCapsAlikeUnderARampLimit) {
  SetBudgetForPeak(1.08);
  replay_servers_ = true;
  row_.control.ramp_up_w_per_s = 500;
  row_.control.ramp_window = seconds(10);
  const sim::RowResult simulated = Simulate("polca", {});
  EXPECT_GT(simulated.ramp_held_server_steps, 0u) << "the limit must hold some lift back";
  const std::vector<Change> twin = SimulatorDecisions(simulated);
  EXPECT_GT(twin.size(), 10u);
  const auto [daemon, daemon_brakes] = RunDaemon(simulated, {});
  EXPECT_EQ(FirstDifference(twin, daemon), "");
  EXPECT_EQ(daemon_brakes, simulated.brake_events);
}

// The energy saver (issue 51) on every server: the simulator's engines' histograms, as each
// agent would scrape them at the end of every engine window, handed to real service::Agents over
// simulated GPUs on one fake clock; each agent reads its window (service::EngineWindow) and steps
// its saver, and both must hold the same clock on every server after every window.
void TwinTest::StepSaversAlike(double itl_slo_s, double ttft_slo_s, bool prefill_boost) {
  const model::GpuSpec& spec = row_.model->gpu().spec();
  if (prefill_boost) row_.energy_saver_prefill_boost = sim::SimTime(0);
  row_.energy_saver =
      policy::EnergySaverSettings{.clocks = policy::EnergySaverClocks(spec, 0.5, 0.05),
                                  .itl_p50_slo_s = itl_slo_s,
                                  .ttft_p99_slo_s = ttft_slo_s};
  std::vector<sim::SaverStep> steps;
  auto source = sim::MakeWorkload(scenario_->scenario, "azure", kServers,
                                  sim::HpServers(kServers, row_.hp_server_fraction),
                                  scenario_->scenario.seed);
  ASSERT_TRUE(source) << source.error().message();
  auto none = policy::MakePolicy("none", scenario_->params);
  sim::RunOptions options;
  options.on_energy_saver = [&steps](const sim::SaverStep& s) { steps.push_back(s); };
  ASSERT_TRUE(sim::SimulateRow(row_, **source, **none, options));
  core::FakeClock clock;
  std::vector<std::vector<std::unique_ptr<gpu::Device>>> devices;
  std::vector<std::unique_ptr<service::Agent>> agents;
  const telemetry::BucketCounter itl0(telemetry::kVllmItlBucketsS);
  const telemetry::BucketCounter ttft0(telemetry::kVllmTtftBucketsS);
  for (int s = 0; s < kServers; ++s) {
    devices.push_back(gpu::sim::CreateSimDevices(spec, 1, &clock, {}));
    // The failsafe at the highest clock: the hour outlasts the longest lease, and this test is
    // about the saver's own steps (the row's cap winning is tested on each side).
    std::vector<service::AgentGpu> gpus = {
        {.device = devices.back()[0].get(), .spec = spec, .failsafe_clock = spec.sm_clock_max}};
    service::AgentOptions o{.state_file = (dir_ / fmt::format("e{}.json", s)).string()};
    o.energy_saver = service::EnergySaverOptions{
        .itl_p50_slo_s = itl_slo_s, .ttft_p99_slo_s = ttft_slo_s, .prefill_boost = prefill_boost};
    auto agent = service::Agent::Create(std::move(gpus), o, &clock);
    ASSERT_TRUE(agent) << agent.error().message();
    ASSERT_TRUE((*agent)->PutCaps(R"({"lease_s": 3600, "request_id": "start"})"));
    // The engine's first scrape as it starts, as the simulator reads its engines from zero.
    (*agent)->RecordEngineScrape(
        service::EngineSample{.ttft = ttft0.Sample(), .itl = itl0.Sample()});
    agents.push_back(std::move(*agent));
  }
  const core::TimePoint start = clock.Now();
  int changes = 0;
  std::vector<double> last(kServers, spec.sm_clock_max.value());
  for (const sim::SaverStep& step : steps) {
    clock.Advance(start + step.at - clock.Now());
    service::Agent& agent = *agents[static_cast<size_t>(step.server)];
    agent.RecordEngineScrape(service::EngineSample{.prompt_tokens = step.prompt_tokens,
                                                   .generation_tokens = step.generated_tokens,
                                                   .ttft = step.ttft,
                                                   .itl = step.itl});
    agent.Tick();
    const double daemon = agent.State()["energy_saver"]["clock_mhz"].get<double>();
    ASSERT_EQ(daemon, step.clock.value())
        << "server " << step.server << " at " << core::ToSeconds(step.at)
        << " s: " << agent.State()["energy_saver"].dump();
    changes += daemon != last[static_cast<size_t>(step.server)] ? 1 : 0;
    last[static_cast<size_t>(step.server)] = daemon;
  }
  EXPECT_GT(steps.size(), 300u);
  EXPECT_GT(changes, 10) << "the hour must move the saver's clock";
  for (auto& agent : agents) ASSERT_TRUE(agent->Shutdown());
}

TEST_F(TwinTest, SimulatorAndAgentsStepTheEnergySaverAlike) { StepSaversAlike(0.060, 3.0, false); }

// With the prefill boost the first token is the boost's on both sides: a first-token SLO no
// window meets (50 ms) holds neither saver at the highest clock.
TEST_F(TwinTest, SimulatorAndAgentsStepTheEnergySaverAlikeWithThePrefillBoost) {
  StepSaversAlike(0.060, 0.05, true);
}

}  // namespace
}  // namespace headroom
