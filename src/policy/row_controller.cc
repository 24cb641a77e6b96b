#include "policy/row_controller.h"

#include <algorithm>
#include <chrono>
#include <utility>

#include <fmt/format.h>

#include "core/check.h"
#include "policy/same_target.h"

namespace headroom::policy {
namespace {

// The share of a GPU's catalog idle power below which no powered GPU reads (IdleFloor).
constexpr double kIdleFloorShare = 0.5;

// GPUs draw above their limit only briefly and little; a sum beyond this share of the server's
// GPU power budget (rated system power less the rest) is a broken or hostile report.
constexpr double kPlausibleGpuPowerMargin = 1.25;

// ServerCount::as.
constexpr std::string_view kReported = "reported";
constexpr std::string_view kImplausible = "implausible";
constexpr std::string_view kRatedMax = "rated-max";
constexpr std::string_view kLastValue = "last-value";

// Whether `to` loosens any control `from` holds (a lift): a brake released, a cap raised or gone.
bool Loosens(const ServerTargets& from, const ServerTargets& to) {
  const auto raised = [](auto before, auto after) {
    return before && (!after || *after > *before);
  };
  return (from.brake && !to.brake) || raised(from.sm_clock_cap, to.sm_clock_cap) ||
         raised(from.power_limit, to.power_limit);
}

}  // namespace

core::Watts BudgetInForce(const RowView& view) {
  return view.requested ? std::min(*view.requested, view.budget) : view.budget;
}

core::Watts IdleFloor(int gpus, core::Watts gpu_idle_power) {
  return core::Watts(kIdleFloorShare * gpus * gpu_idle_power.value());
}

RowController::RowController(RowPolicy& policy, ControlSettings settings,
                             std::vector<ControlledServer> servers)
    : policy_(&policy), settings_(settings) {
  // The observation's fixed part once: a step writes only what the reports change.
  obs_.servers.resize(servers.size());
  for (size_t i = 0; i < servers.size(); ++i) {
    HEADROOM_CHECK(servers[i].gpu.sm_clock_step.value() > 0)
        << "server " << i << ": GPU type '" << servers[i].gpu.name << "' has no SM clock grid";
    Server s;
    s.spec = servers[i];
    servers_.push_back(std::move(s));
    ServerObservation& o = obs_.servers[i];
    o.priority = servers[i].priority;
    o.gpu_max = servers[i].rated_power - servers[i].non_gpu_power;
  }
}

void RowController::Accepted(size_t i, const ServerTargets& targets) {
  servers_[i].accepted = targets;
}

void RowController::Count(Server& s, const ServerReport& r, ServerCount* out) const {
  const core::Watts rated = s.spec.rated_power;
  // In place, the reason cleared only when there is one: every server is counted every step.
  if (!out->why.empty()) out->why.clear();
  if (!r.reachable) {
    // Whichever of its last value and its rated maximum is safer (higher).
    out->watts = std::max(s.last_counted, rated);
    out->as = out->watts == rated ? kRatedMax : kLastValue;
    return;
  }
  const core::Watts gpu_max = rated - s.spec.non_gpu_power;
  const bool negative = r.gpu_power.value() < 0;
  const bool below = !negative && r.gpu_power < s.spec.gpu_idle_floor;
  const bool beyond = r.gpu_power.value() > kPlausibleGpuPowerMargin * gpu_max.value();
  // A report that breaks the server's physics must not lower the row's power: one bad agent
  // could otherwise lift every cap.
  if (!r.implausible.empty() || negative || below || beyond) {
    std::string why = r.implausible;
    if (why.empty() && negative) {
      why = fmt::format("its GPUs report {:.0f} W", r.gpu_power.value());
    } else if (why.empty() && below) {
      why = fmt::format("its GPUs report {:.0f} W, less than the {:.0f} W they draw idle",
                        r.gpu_power.value(), s.spec.gpu_idle_floor.value());
    } else if (why.empty()) {
      why = fmt::format("its GPUs report {:.0f} W, more than {:.0f}x the {:.0f} W they can draw",
                        r.gpu_power.value(), kPlausibleGpuPowerMargin, gpu_max.value());
    }
    out->watts = rated;
    out->as = kImplausible;
    out->why = std::move(why);
    return;
  }
  // The rest of the server (CPUs, fans, NVSwitches) at its catalog maximum over-counts at idle
  // and never under-counts.
  s.last_counted = r.gpu_power + s.spec.non_gpu_power;
  out->watts = s.last_counted;
  out->as = kReported;
}

void RowController::Sync(size_t i, const ServerReport& r, RowStep* step) {
  Server& s = servers_[i];
  if (!r.reachable || !r.holds) return;
  if (!s.held_at_start) {
    // Restart-safe: start from what the server holds, not from nothing.
    s.held_at_start = *r.holds;
    Accepted(i, *r.holds);
    step->synced.push_back(i);
    return;
  }
  // What a server holds counts, whatever lease it has: its agent restarted, or another
  // controller, a person's PUT or a replayed request changed its caps. Believed, so that the
  // next send puts the targets back; not while a change is on its way (the agent still shows
  // the caps before it).
  if (!r.pending && s.accepted && !r.command_in_flight &&
      !SameTargets(*s.accepted, *r.holds, s.spec.gpu)) {
    Accepted(i, *r.holds);
    step->reasserted.push_back(i);
  }
}

void RowController::TrackConvergence(size_t i, const ServerReport& r, core::Duration now,
                                     RowStep* step) {
  Server& s = servers_[i];
  // An unreachable server is counted at its rated maximum and named as such; what it holds is
  // unknown, not unconverged.
  if (!r.reachable || !r.holds || SameTargets(*r.holds, s.target, s.spec.gpu)) {
    s.diverged_since.reset();
    return;
  }
  if (!s.diverged_since) s.diverged_since = now;
  if (now - *s.diverged_since >= settings_.converge_within) step->unconverged.push_back(i);
}

bool RowController::Unconfirmed(size_t i, const ServerReport& r) const {
  const Server& s = servers_[i];
  if (!r.reachable || r.command_failed || !r.confirmed || r.pending) return true;
  if (r.holds && !SameTargets(*r.holds, s.target, s.spec.gpu)) return true;
  return !s.accepted || !SameTargets(*s.accepted, s.target, s.spec.gpu);
}

void RowController::UpdateEscalation(core::Duration now, const std::vector<ServerReport>& reports,
                                     double fraction, const std::string& state,
                                     std::vector<Event>* events) {
  if (escalated_) {
    if (fraction < settings_.brake_release) {
      escalated_ = false;
      over_since_.reset();
      events->push_back({now, "escalated", state,
                         fmt::format("p {:.3f} < brake_release {:.3f}: escalation lifted", fraction,
                                     settings_.brake_release)});
    }
    return;
  }
  // Under budget, whether caps took does not matter (and is not looked at, every step).
  bool untaken = false;
  for (size_t i = 0; fraction >= 1.0 && i < servers_.size() && !untaken; ++i) {
    untaken = Unconfirmed(i, reports[i]);
  }
  if (fraction < 1.0 || !untaken) {
    over_since_.reset();
    return;
  }
  if (!over_since_) over_since_ = now;
  if (now - *over_since_ >= settings_.escalate_after) {
    escalated_ = true;
    events->push_back({now, state, "escalated",
                       fmt::format("p {:.3f} over budget for {:.0f} s with caps not confirmed "
                                   "on some server: braking every reachable server",
                                   fraction, core::ToSeconds(now - *over_since_))});
  }
}

void RowController::Observe(const RowView& in, core::Duration now) {
  RowStep& step = step_;
  step.counted.resize(servers_.size());
  step.synced.clear();
  step.reasserted.clear();
  step.unconverged.clear();
  step.servers_sum = core::Watts(0);
  // One pass over the servers: counted, synced, observed (each server's part depends on its own
  // report alone).
  for (size_t i = 0; i < servers_.size(); ++i) {
    const ServerReport& report = in.servers[i];
    ServerCount& counted = step.counted[i];
    Count(servers_[i], report, &counted);
    step.servers_sum += counted.watts;
    Sync(i, report, &step);
    // Only a report counted as reported carries believable GPU power and engine figures.
    const bool believed = counted.as == kReported;
    ServerObservation& o = obs_.servers[i];
    o.gpu_power = believed ? report.gpu_power : core::Watts(0);
    o.serving = believed ? report.serving : std::nullopt;
  }
  obs_.now = now;
  obs_.row_power = in.metered.value_or(step.servers_sum);
  obs_.telemetry_age = in.metered ? in.telemetry_age : core::Duration::zero();
}

void RowController::UpdateBudget(const RowView& in, core::Duration now) {
  const core::Watts budget = BudgetInForce(in);
  // Lowered from what was in force: met within its time, the brake guarding the budget before
  // it meanwhile (still the earlier one where a lowered budget is lowered again).
  if (stepped_ && budget < budget_ && in.comply_within > core::Duration::zero()) {
    if (!guard_) guard_ = budget_;
    guard_until_ = now + in.comply_within;
  }
  if (guard_ && (now >= guard_until_ || budget >= *guard_)) guard_.reset();
  budget_ = budget;
  obs_.budget = budget;
  obs_.provisioned = in.budget;
  obs_.brake_budget = guard_.value_or(budget);
  step_.budget = budget;
  step_.brake_budget = obs_.brake_budget;
  step_.complying = guard_.has_value();
}

void RowController::LimitRamp(core::Duration now, RowStep* step) {
  step->ramp_held.clear();
  while (!released_.empty() && now - released_.front().first >= settings_.ramp_window) {
    released_.pop_front();
  }
  double room_w = settings_.ramp_up_w_per_s * core::ToSeconds(settings_.ramp_window);
  for (const auto& [at, watts] : released_) room_w -= watts;
  for (size_t i = 0; i < servers_.size(); ++i) {
    Server& s = servers_[i];
    if (!s.accepted || !step->changed[i] || !Loosens(*s.accepted, s.target)) continue;
    // At most what its GPUs can still rise by: from what they draw now to their power budget.
    const ServerObservation& o = obs_.servers[i];
    const double release_w = std::max(0.0, (o.gpu_max - o.gpu_power).value());
    if (release_w <= room_w || released_.empty()) {
      released_.emplace_back(now, release_w);
      room_w -= release_w;
      continue;
    }
    s.target = *s.accepted;
    step->changed[i] = 0;
    step->ramp_held.push_back(i);
  }
}

void RowController::NoteLoadRamp(core::Duration now, RowStep* step) {
  const double row_w = obs_.row_power.value();
  while (!lows_.empty() && lows_.back().second >= row_w) lows_.pop_back();
  lows_.emplace_back(now, row_w);
  while (now - lows_.front().first > settings_.ramp_window) lows_.pop_front();
  const double window_s = core::ToSeconds(settings_.ramp_window);
  // Faster than the limit with none of the controller's lifts in the window: the load's own.
  const bool ramping =
      released_.empty() && row_w - lows_.front().second > settings_.ramp_up_w_per_s * window_s;
  step->load_ramp = ramping && !load_ramping_;
  if (step->load_ramp) ++load_ramps_;
  load_ramping_ = ramping;
}

const RowStep& RowController::Step(const RowView& in) {
  HEADROOM_CHECK(in.servers.size() == servers_.size())
      << in.servers.size() << " reports for " << servers_.size() << " servers";
  // Whole milliseconds: the policy's event texts print durations exactly ("after 40s").
  const core::Duration now = std::chrono::floor<std::chrono::milliseconds>(in.now);
  RowStep& step = step_;
  UpdateBudget(in, now);
  stepped_ = true;
  Observe(in, now);
  policy_->Step(obs_, &step.decision);
  HEADROOM_CHECK(step.decision.targets.size() == servers_.size())
      << "policy " << policy_->name() << " returned " << step.decision.targets.size()
      << " targets for " << servers_.size() << " servers";
  step.holding = now < settings_.restart_hold;
  for (size_t i = 0; i < servers_.size(); ++i) {
    Server& s = servers_[i];
    s.target = step.decision.targets[i];
    if (step.holding && s.held_at_start) s.target = Tightest(s.target, *s.held_at_start);
  }
  // Escalation brakes the row, so it too guards what the brake guards.
  UpdateEscalation(now, in.servers, obs_.BrakeFraction(), step.decision.state,
                   &step.decision.events);
  step.changed.resize(servers_.size());
  for (size_t i = 0; i < servers_.size(); ++i) {
    Server& s = servers_[i];
    if (escalated_) s.target.brake = true;
    step.changed[i] = !s.accepted || !SameTargets(*s.accepted, s.target, s.spec.gpu);
  }
  if (settings_.ramp_up_w_per_s > 0) LimitRamp(now, &step);
  holding_lifts_ = !step.ramp_held.empty();
  bool braking = false;
  for (size_t i = 0; i < servers_.size(); ++i) {
    step.decision.targets[i] = servers_[i].target;
    TrackConvergence(i, in.servers[i], now, &step);
    braking = braking || servers_[i].target.brake;
  }
  if (settings_.ramp_up_w_per_s > 0) NoteLoadRamp(now, &step);
  step.brake_event = braking && !braking_;
  if (step.brake_event) ++brake_events_;
  braking_ = braking;
  step.state = escalated_ ? "escalated" : step.decision.state;
  return step;
}

}  // namespace headroom::policy
