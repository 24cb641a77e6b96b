// RowController: everything a row controller decides around the policy's step, in the one place
// that the controller daemon (service::Controller, which keeps only the I/O: polls, commands,
// leases, audit, metrics) and the row simulator (sim::SimulateRow) both run:
// - what each server counts for: its report (GPU power plus the rest of the server at its
//   catalog maximum), or its rated maximum when it cannot be seen or its report breaks its
//   physics; the row's power is the meter's reading, else the sum of the counts;
// - what each server holds: its report of the caps it holds is compared with what it accepted
//   and with its target at every step, whatever lease it has (another controller, a person's PUT
//   or a replayed request may have changed them); a difference is believed and the target re-sent,
//   and a server whose caps differ from its target for `converge_within` is named;
// - the restart hold: caps the servers already held at the first sight of them are kept for
//   `restart_hold`, so a restarted controller lifts nothing before it knows the row;
// - escalation: over budget for `escalate_after` while some server's caps have not taken, every
//   server is braked until p falls below brake_release;
// - the budget in force: the provisioned one, or a lower one the grid asks for; a lowered budget
//   is to be met within its `comply_within`, and until then the brake (the policy's and
//   escalation) guards the budget before it, so that caps, with their actuation delay, meet it
//   and the brake stays the last resort; a raised one is in force at once;
// - which targets changed against what each server accepted (SameTargets: the same clock of the
//   server's GPU grid and power limits within 0.5 W, the rule its agent applies), and what one
//   brake event is: a step at which the row goes from no server braked to some server braked
//   (the policy's brake and escalation alike).
// Pure: no I/O, no clock reads (time arrives in the view). Thread-compatible.
#ifndef HEADROOM_POLICY_ROW_CONTROLLER_H_
#define HEADROOM_POLICY_ROW_CONTROLLER_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/time.h"
#include "core/units.h"
#include "model/gpu_spec.h"
#include "policy/row_policy.h"

namespace headroom::policy {

// One server of the row, fixed for the controller's life.
struct ControlledServer {
  ServerPriority priority = ServerPriority::kLow;
  core::Watts rated_power{0};    // maximum system power
  core::Watts non_gpu_power{0};  // the rest of the server, counted at its maximum
  // GPU power below this is a broken or hostile report (IdleFloor): 0, no floor.
  core::Watts gpu_idle_floor{0};
  // Its GPU type: its targets are compared on this GPU's clock grid (SameTargets).
  // REQUIRES: gpu.sm_clock_step > 0.
  model::GpuSpec gpu;
};

// No powered GPU draws less than half its catalog idle power (idle power varies by board,
// temperature and driver, never by half): a server whose GPUs report less is counted as
// implausible, so that one agent reporting 0 W cannot lift a row's caps.
core::Watts IdleFloor(int gpus, core::Watts gpu_idle_power);

struct ControlSettings {
  core::Duration restart_hold{0};
  core::Duration escalate_after{std::chrono::seconds(10)};
  double brake_release = 0.95;  // the policy's: escalation lifts below it
  // A reachable server whose caps differ from its target this long is named unconverged (and
  // counts as unconfirmed for escalation): longer than the slowest actuation path (out-of-band
  // caps take up to 40 s) and a few periods, so that a change on its way is not named.
  core::Duration converge_within{std::chrono::seconds(60)};
  // A utility's ramp limit (0: none): caps and the brake are lifted in steps, so that what the
  // lifts can release within any `ramp_window` stays within ramp_up_w_per_s x ramp_window. A
  // lift's release is counted at the most it can be (the server's GPU power budget less what
  // its GPUs draw now); one lift at a time is always allowed, so that lifting never stalls.
  double ramp_up_w_per_s = 0;
  core::Duration ramp_window{std::chrono::seconds(10)};
};

// One server this step, as its agent reported it (the simulator reports what it modelled).
struct ServerReport {
  bool reachable = true;               // answered this step
  core::Watts gpu_power{0};            // its GPUs' power, when reachable
  std::string implausible;             // non-empty: the report itself says it cannot be believed
  std::optional<ServerTargets> holds;  // the caps it holds, when reachable
  bool has_lease = true;
  bool pending = false;                  // accepted changes still waiting for their actuation delay
  bool confirmed = true;                 // its GPUs read back what it was last asked
  bool command_failed = false;           // the last command to it failed and awaits its retry
  bool command_in_flight = false;        // a command to it is still out
  std::optional<ServingSignal> serving;  // its engine's window, when it reports one
};

struct RowView {
  core::Duration now{0};  // since the controller started (monotonic)
  core::Watts budget{0};  // provisioned
  // A lower budget the grid asks of the row now (BudgetSchedule, PUT /v1/budget), to be met
  // within `comply_within` of the step that first sees it lower; nullopt: the provisioned one.
  std::optional<core::Watts> requested;
  core::Duration comply_within{0};
  std::optional<core::Watts> metered;  // the row meter's reading; nullopt: the servers' sum
  core::Duration telemetry_age{0};
  std::vector<ServerReport> servers;  // one per ControlledServer, same order
};

// The budget in force: the provisioned one, or the lower one the grid asks for (never above it).
core::Watts BudgetInForce(const RowView& view);

struct ServerCount {
  core::Watts watts{0};
  // "reported", "implausible" (counted at the rated maximum), "rated-max" or "last-value"
  // (unreachable: the higher of the last reported count and the rated maximum). A literal's view,
  // so that counting builds no strings: the simulator counts every server every second.
  std::string_view as;
  std::string why;  // for "implausible": what breaks the server's physics
};

struct RowStep {
  // The policy's decision with the restart hold and escalation applied: the targets to hold.
  Decision decision;
  std::string state;  // decision.state, or "escalated"
  std::vector<ServerCount> counted;
  core::Watts servers_sum{0};
  // The target differs from what the server accepted (bytes, not vector<bool>'s bits: read and
  // written for every server every step).
  std::vector<std::uint8_t> changed;
  std::vector<size_t> synced;  // servers seen for the first time (their caps taken as held)
  // Servers found holding other caps than they accepted, with nothing on its way (a restarted
  // agent, or a PUT from elsewhere): believed, so that their targets are re-sent.
  std::vector<size_t> reasserted;
  // Servers whose caps have differed from their targets for converge_within or longer.
  std::vector<size_t> unconverged;
  bool holding = false;         // the restart hold is on
  bool brake_event = false;     // the row entered the brake at this step
  core::Watts budget{0};        // in force: the provisioned one or the lower one asked for
  core::Watts brake_budget{0};  // what the brake guards (the one before while complying)
  bool complying = false;       // a lowered budget is within its time to comply
  // ControlSettings::ramp_up_w_per_s: servers whose lift this step was held back (their targets
  // stay what they accepted), and whether the row rose faster than the limit with no lift of the
  // controller's in the window (the load's own ramp; true on its first step).
  std::vector<size_t> ramp_held;
  bool load_ramp = false;
};

class RowController {
 public:
  // REQUIRES: `policy` outlives the controller.
  RowController(RowPolicy& policy, ControlSettings settings, std::vector<ControlledServer> servers);

  // REQUIRES: view.servers.size() == the number of servers; view.now never decreases.
  // The step is the controller's, valid until the next Step: its buffers are reused, so that
  // a step allocates nothing once the row's size is known (600,000 steps a simulated week).
  const RowStep& Step(const RowView& view);
  // Server i took `targets` (its command succeeded): the base of change detection.
  void Accepted(size_t i, const ServerTargets& targets);

  const std::optional<ServerTargets>& accepted(size_t i) const { return servers_[i].accepted; }
  // Whether server i's caps are not known to hold (unreachable, failing, pending, changed, or
  // holding something other than its target).
  bool Unconfirmed(size_t i, const ServerReport& report) const;
  std::uint64_t brake_events() const { return brake_events_; }
  // Times the row rose faster than ControlSettings::ramp_up_w_per_s on its own (RowStep::load_ramp
  // rising edges).
  std::uint64_t load_ramps() const { return load_ramps_; }
  bool escalated() const { return escalated_; }
  // Stepped at least once and at rest: not escalated, not over budget with caps untaken, no
  // server braked. With every server reachable and the row under budget, a step then does only
  // what its policy decides (RowPolicy::QuietBelow).
  bool Resting() const {
    return stepped_ && !escalated_ && !over_since_ && !braking_ && !guard_ && !holding_lifts_;
  }
  // The budget in force at the last step (0 before the first).
  core::Watts budget() const { return budget_; }
  const RowPolicy& policy() const { return *policy_; }

 private:
  struct Server {
    ControlledServer spec;
    std::optional<ServerTargets> accepted;
    std::optional<ServerTargets> held_at_start;
    core::Watts last_counted{0};
    ServerTargets target;
    // Since when its reported caps have differed from its target (reachable steps only).
    std::optional<core::Duration> diverged_since;
  };

  void Count(Server& s, const ServerReport& r, ServerCount* out) const;
  // Counts, syncs and observes every server: the policy's input in obs_.
  void Observe(const RowView& in, core::Duration now);
  void Sync(size_t i, const ServerReport& r, RowStep* step);
  void TrackConvergence(size_t i, const ServerReport& r, core::Duration now, RowStep* step);
  void UpdateEscalation(core::Duration now, const std::vector<ServerReport>& reports,
                        double fraction, const std::string& state, std::vector<Event>* events);
  // The budget in force and what the brake guards (the time to comply with a lowered budget).
  void UpdateBudget(const RowView& in, core::Duration now);
  // ControlSettings::ramp_up_w_per_s: holds back the lifts beyond what the window allows, and
  // notes the row's own ramps.
  void LimitRamp(core::Duration now, RowStep* step);
  void NoteLoadRamp(core::Duration now, RowStep* step);

  RowPolicy* policy_;
  ControlSettings settings_;
  std::vector<Server> servers_;
  bool escalated_ = false;
  std::optional<core::Duration> over_since_;
  bool braking_ = false;
  bool stepped_ = false;
  std::uint64_t brake_events_ = 0;
  core::Watts budget_{0};  // in force at the last step
  // While a lowered budget is within its time to comply: the budget before it, which the brake
  // guards until `guard_until_`.
  std::optional<core::Watts> guard_;
  core::Duration guard_until_{0};
  // The lifts released within the last ramp_window: (when, the most they can release).
  std::deque<std::pair<core::Duration, double>> released_;
  // Row power over the last ramp_window, lowest first (a monotonic queue), and whether the last
  // step was a load ramp.
  std::deque<std::pair<core::Duration, double>> lows_;
  bool load_ramping_ = false;
  bool holding_lifts_ = false;  // the last step held a lift back for the ramp limit
  std::uint64_t load_ramps_ = 0;
  RowStep step_;     // Step's result, reused
  Observation obs_;  // the policy's input, reused
};

}  // namespace headroom::policy

#endif  // HEADROOM_POLICY_ROW_CONTROLLER_H_
