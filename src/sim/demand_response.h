// Demand response at a plan's answers: how much of its provisioned budget a row at each policy's
// answer can give up when the grid asks, within the time it is given to comply and for as long
// as it is asked, and at what latency cost. The event is placed where it is hardest to hold, at
// each planning week's peak (the stretch of the asked length with the most expected load), and
// simulated exactly there, warm-started before it as a power verdict's windows are
// (sim/power_verdict.h); the uncapped row is run over the same stretch for the energy not drawn
// and the latency change. A shed holds on a week when the row came under the lowered budget for
// a minute within the time to comply, stayed under it after that time, and never braked; the
// largest shed held is searched in whole percents, assuming that a row that cannot hold a shed
// cannot hold a larger one. Thread-safe calls; the progress callback runs on the calling thread.
#ifndef HEADROOM_SIM_DEMAND_RESPONSE_H_
#define HEADROOM_SIM_DEMAND_RESPONSE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "sim/capacity_planner.h"
#include "sim/row_simulator.h"
#include "sim/scenario.h"

namespace headroom::sim {

// One policy at its answer on one planning week, asked to shed one share.
struct ShedTrial {
  int week = 0;         // the plan's week index (a planning week)
  double shed = 0;      // of the provisioned budget
  double start_s = 0;   // the event's start within the week
  double budget_w = 0;  // asked of the row
  bool held = false;
  std::string why_not = {};  // what broke it ("3 brakes; over 195 kW for 812 s after the deadline")
  std::optional<double> complied_after_s = {};
  double comply_within_s = 0;
  double over_after_deadline_s = 0;
  double peak_after_deadline_w = 0;
  std::uint64_t brake_events = 0;
  double power_before_w = 0;   // metered mean over the minute before the event
  double mean_w = 0;           // during it
  double uncapped_mean_w = 0;  // the uncapped row's over the same stretch
  double energy_not_drawn_j = 0;
  // E2E of the requests that arrived during the event, against the uncapped row's (percent).
  double hp_p50_pct = 0;
  double hp_p99_pct = 0;
  double lp_p50_pct = 0;
  double lp_p99_pct = 0;
};

struct PolicyShed {
  std::string policy;
  int servers = 0;
  bool holds = false;                      // the asked shed, on every planning week
  std::string why_not = {};                // the first week that broke it, named, and why
  std::vector<ShedTrial> asked = {};       // per planning week
  double largest_held = 0;                 // whole percents (0: not even 1%)
  std::vector<ShedTrial> at_largest = {};  // per planning week; empty when largest_held is 0
};

struct ShedPlan {
  double shed = 0;  // as asked
  double length_s = 0;
  double comply_within_s = 0;
  std::vector<PolicyShed> policies = {};  // the plan's capping policies with an answer
  int simulations = 0;
  // The chosen policy's row at the asked shed on the first planning week, and the uncapped
  // row's over the same stretch, in 30-second windows from the stretch's start (the event
  // starts event_at_s into it): the report's plot.
  std::string plotted_policy = {};
  double event_at_s = 0;
  double budget_w = 0;  // provisioned
  std::vector<PowerWindow> power = {};
  std::vector<PowerWindow> uncapped_power = {};
};

struct ShedOptions {
  DemandResponse asked;
  std::string trace;  // as PlanOptions::trace
  int threads = 1;
  // The row runs this long before the event (from empty, as a verdict's windows do): the 2
  // minutes a verdict needs to reach the load, and the minute before the event metered.
  core::Duration warmup = std::chrono::minutes(5);
  const std::atomic<bool>* stop = nullptr;
  std::function<void(int done, int total_estimate)> progress;
};

// kInvalidArgument when the workload is not synthesized (the event is placed on a week's load)
// or the shed is not in (0, 1).
[[nodiscard]] core::Result<ShedPlan> PlanShed(const ResolvedScenario& scenario,
                                              const CapacityPlan& plan, const ShedOptions& options);

// "25%:3h" or "25%:3h:30s" (the time to comply; 60 s when not given): --shed.
// kInvalidArgument naming the flag and what was expected.
[[nodiscard]] core::Result<DemandResponse> ParseShed(std::string_view spec);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_DEMAND_RESPONSE_H_
