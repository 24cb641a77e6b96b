// RowPolicy: the row-level power controller's decision function, shared by the row simulator
// (sim/) and the controller daemon. Pure: no I/O, no clock reads, no threads. Time arrives in the
// Observation; decisions leave as a returned Decision (per-server targets plus explanation
// events). A policy may keep state between steps (hysteresis, brake hold); it is
// thread-compatible (one controller drives one instance).
#ifndef HEADROOM_POLICY_ROW_POLICY_H_
#define HEADROOM_POLICY_ROW_POLICY_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "core/units.h"

namespace headroom::policy {

enum class ServerPriority { kHigh, kLow };

// "hp" / "lp", the names scenario files and reports use.
std::string_view PriorityName(ServerPriority priority);
// Accepts "hp", "high", "lp", "low" (any case); anything else is InvalidArgument.
[[nodiscard]] core::Result<ServerPriority> ParsePriority(std::string_view text);

// What the controller asks of every GPU of one server. Absent = no cap of that kind.
struct ServerTargets {
  std::optional<core::Megahertz> sm_clock_cap = {};
  std::optional<core::Watts> power_limit = {};
  bool brake = false;
  bool operator==(const ServerTargets&) const = default;
};

// The tighter of two targets, control by control (the lower cap, brake if either brakes).
ServerTargets Tightest(const ServerTargets& a, const ServerTargets& b);

// What a server's serving engine did over its last metrics window: the agent derives it from the
// engine's own Prometheus counters (vLLM's prompt and generation token totals, requests running
// and waiting), the simulator from its instances' iterations. Its age is how long ago the
// window ended.
struct ServingSignal {
  double prefill_share = 0;  // prompt tokens / (prompt + generated tokens) in the window, [0, 1]
  double waiting = 0;        // requests queued for admission at the window's end
  double running = 0;        // requests in the running batch at the window's end
  core::Duration age{0};
  bool operator==(const ServingSignal&) const = default;
};

struct ServerObservation {
  ServerPriority priority = ServerPriority::kLow;
  core::Watts gpu_power{0};  // its GPUs' power as reported (0 when not reported or not believed)
  core::Watts gpu_max{0};    // what its GPUs can draw: rated power less the rest of the server
  // The engine's signal, when the server reports one (absent: only the GPUs' power is known).
  std::optional<ServingSignal> serving = {};
};

struct Observation {
  core::Duration now{0};  // time since the controller started (monotonic)
  core::Watts row_power{0};
  // The budget in force: the provisioned one, or a lower one the grid asks for
  // (BudgetSchedule, the controller's PUT /v1/budget).
  core::Watts budget{0};
  // The budget the brake guards (0: `budget`): while a lowered budget is within its time to
  // comply, the one before it, so that caps are given their actuation delay to meet it and the
  // brake stays the last resort.
  core::Watts brake_budget{0};
  // The provisioned budget (0: `budget`): the fixed scale of what a policy learns of the row's
  // power over time (its trend, its bursts), which a budget that changes must not distort.
  core::Watts provisioned{0};
  core::Duration telemetry_age{0};  // how old row_power is
  std::vector<ServerObservation> servers;
  double Fraction() const { return row_power / budget; }
  // p against the budget the brake guards.
  double BrakeFraction() const {
    return row_power / (brake_budget.value() > 0 ? brake_budget : budget);
  }
  core::Watts Provisioned() const { return provisioned.value() > 0 ? provisioned : budget; }
  // Row power as a share of the provisioned budget.
  double ProvisionedFraction() const { return row_power / Provisioned(); }
};

// One line of explanation: why the policy changed state, for the audit log and tests.
struct Event {
  core::Duration at{0};
  std::string from;
  std::string to;
  std::string reason;
};

struct Decision {
  std::vector<ServerTargets> targets;  // one per observed server, same order
  std::string state;                   // the policy's state after this step, e.g. "t1"
  std::vector<Event> events;           // state changes in this step
  double fraction = 0.0;               // p = row_power / budget as the policy read it
};

// Adds the Event of a step whose state changed from `before` to decision->state, its reason the
// step's `reasons` joined by "; "; nothing when the state stayed.
void NoteStateChange(Decision* decision, core::Duration at, const std::string& before,
                     const std::vector<std::string>& reasons);

class RowPolicy {
 public:
  virtual ~RowPolicy() = default;
  virtual std::string name() const = 0;
  // Every state name this policy can report, for "time in state" tables.
  virtual std::vector<std::string> states() const = 0;
  // REQUIRES: obs.budget > 0; obs.now never decreases between calls.
  // The decision into *out, whose buffers are reused: the row controller steps once a second,
  // 600,000 times a simulated week, and keeps one Decision for all of them.
  virtual void Step(const Observation& obs, Decision* out) = 0;
  Decision Step(const Observation& obs) {
    Decision decision;
    Step(obs, &decision);
    return decision;
  }
  // A row power (a fraction of the budget) at or under which a step from the policy's present
  // state would decide what its last step did and change none of its state: no rung to climb,
  // no brake to engage, nothing learnt (infinite for the uncapped row's policy, 0 when there is
  // no such bound). A simulator whose servers all answer may skip such steps, which would change
  // nothing; the controller daemon steps every policy every time.
  virtual double QuietBelow() const { return 0; }
};

}  // namespace headroom::policy

#endif  // HEADROOM_POLICY_ROW_POLICY_H_
