// Capacity planning: for each policy, the largest number of servers that fits in a row's
// provisioned budget while the SLO holds (scenario.h: brake events, HP/LP latency change against
// the uncapped baseline at the same per-server load and week) on every planning week, found by a
// search over server counts per policy (galloping from where the uncapped row would reach its
// budget, then bisecting; a count's weeks asked for one at a time, up to the first that fails),
// each round's simulations run in parallel; then
// lowered until its weekly risk of a power event, bounded from unseen weeks (seeds the search
// never used, each judged by its power verdict: sim/power_verdict.h), meets the plan's target
// (sim/weekly_risk.h). Also the load calibration that makes the uncapped row peak at a target
// fraction of its budget. Thread-safe calls (each builds its own simulations); the callbacks run on
// the calling thread.
#ifndef HEADROOM_SIM_CAPACITY_PLANNER_H_
#define HEADROOM_SIM_CAPACITY_PLANNER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/plan_work.h"
#include "sim/power_verdict.h"
#include "sim/row_simulator.h"
#include "sim/run_summary.h"
#include "sim/scenario.h"
#include "sim/scenario_run.h"
#include "sim/workload.h"

namespace headroom::sim {

struct PolicyPlan {
  std::string policy;
  // Servers that keep the SLO on every planning and unseen week; 0: not even the provisioned row.
  int max_servers = 0;
  double extra_pct = 0;
  RunSummary at_max;  // the planning week with the highest peak at max_servers
  Impact impact;      // the largest change of each latency and throughput over planning weeks
  std::string limit;  // why one more server fails (the first SLO it breaks), or "search bound"
  int searched_servers = 0;  // what the planning weeks alone allow (before the unseen weeks)
  int validated_weeks = 0;   // unseen weeks that keep the SLO at max_servers (all of them or 0)
  // How the search's answer failed on the unseen weeks, e.g. "2 of 8 unseen weeks failed at 51
  // servers, first unseen week 3 (seed 1002): 1 brake event"; empty when it held.
  std::string validation_failure;
};

struct CapacityPlan {
  int baseline_servers = 0;
  // PlanOptions::risk_beyond as run: PlanRisk covers every count within this many of each
  // answer (bounded by the search's range) on every unseen week.
  int risk_beyond = 0;
  RunSummary baseline;  // none, at the provisioned servers, on the first planning week
  int planning_weeks = 1;
  // The unseen weeks, each judged by its power verdict (sim/power_verdict.h): a count fits only
  // if its weekly risk, bounded from them at `confidence`, is at most max_weekly_risk. 0: no
  // risk bound (a real trace, or --validate 0).
  int validation_weeks = 0;
  double max_weekly_risk = 0.05;
  double confidence = 0.95;
  // The stress cases every kept count also passed (DescribeStress), weeks planning_weeks on.
  std::vector<std::string> stress_cases;
  // By week index: the planning weeks, the stress cases (planning week 1's seed), the unseen.
  std::vector<std::uint64_t> week_seeds;
  std::vector<PolicyPlan> policies;
  int simulations = 0;
  // Of them, those that replayed their week's requests from an earlier run's recording
  // (PlanOptions::recording_bytes) instead of synthesizing them. Varies with the threads'
  // timing (two runs of one week at once both synthesize it), unlike everything else here: not
  // for output that must be the same run to run.
  int replayed_simulations = 0;
  // Runs not simulated but taken from the uncapped row's on the same week and count, where the
  // policy never acted and the row had no power event (PlanOptions::share_quiet_runs); in `runs`
  // beside the simulated ones, not counted in `simulations`.
  int shared_runs = 0;
  // Every simulation the search ran (the baselines as policy "none"), by policy, servers, week.
  // Runs with stopped_early set broke the power SLO and cover part of the trace only.
  std::vector<RunSummary> runs;
};

// The plan's answer: the capping policy that fits the most servers (the first listed on a tie);
// nullptr when no policy but the uncapped one was planned or none keeps the SLO at the
// provisioned row.
const PolicyPlan* ChosenPolicy(const CapacityPlan& plan);
// The weeks the search decides on: the planning weeks and the stress cases (the unseen follow).
int SearchedWeeks(const CapacityPlan& plan);

// What the plan's own simulations say about a policy's capacity under another SLO, without
// simulating more. Of the server counts the search evaluated for `policy` on every planning week
// (with the uncapped baseline at each), `fits` is the largest that keeps `slo` on all of them with
// every smaller evaluated count keeping it too (0 when none does), and `fails` the smallest
// evaluated count above it that breaks it (0 when none does). The true capacity under `slo` lies in
// [fits, fails - 1] when capacity falls with servers, as the search itself assumes.
struct CapacityBounds {
  int fits = 0;
  int fails = 0;
};
CapacityBounds CapacityUnderSlo(const CapacityPlan& plan, const std::string& policy,
                                const Slo& slo);

// The risk at each count a plan simulated, per policy, from its runs alone: of the weeks run
// there (the planning weeks where the search probed the count, the unseen weeks where an answer
// was checked), how many had a power event (a brake or time over budget), the highest peak and
// the smallest margin to the budget. A run stopped at its first power event counts with the
// peak it had reached. A count the plan never ran has no entry.
struct CountRisk {
  std::string policy;
  int servers = 0;
  int weeks = 0;
  int weeks_with_power_event = 0;
  double worst_peak_frac = 0;
  double smallest_margin_w = 0;  // budget less the highest peak; negative over budget
  double most_capped_fraction = 0;
  // Of those, the weeks the search never saw (its unseen weeks): the weekly risk is bounded
  // from these alone (sim/weekly_risk.h, each bound one-sided at the plan's confidence): at
  // most unseen_risk_upper (1 where there are none), at least unseen_risk_lower. A week whose
  // power verdict came near the budget and was not run whole (RunSummary::near_budget) counts
  // as a power event for the upper bound and as none for the lower.
  int unseen_weeks = 0;
  int unseen_weeks_with_power_event = 0;
  int unseen_weeks_near_budget = 0;
  double unseen_risk_upper = 1;
  double unseen_risk_lower = 0;
};
// In the order of plan.policies, then by servers.
std::vector<CountRisk> PlanRisk(const CapacityPlan& plan);
// PlanRisk's entry for `policy` at `servers`; nullopt where the plan ran none.
std::optional<CountRisk> CountRiskAt(const CapacityPlan& plan, const std::string& policy,
                                     int servers);

struct PlanOptions {
  std::vector<std::string> policies;  // empty: the scenario's plan.policies
  std::string trace;                  // as MakeWorkload
  std::optional<int> weeks;           // planning weeks; default: the scenario's plan.weeks
  std::optional<int> validate_weeks;  // unseen weeks; default: the scenario's plan.validate_weeks
  // The risk target and its confidence; default: the scenario's plan.max_weekly_risk,
  // plan.confidence.
  std::optional<double> max_weekly_risk;
  std::optional<double> confidence;
  // Judge every count within this many of each policy's answer, and the chosen answer, on every
  // unseen week, for the risk (PlanRisk); default: the scenario's plan.risk_beyond.
  std::optional<int> risk_beyond;
  std::optional<std::vector<StressCase>> stress;  // default: the scenario's plan.stress
  // How each unseen week's power verdict is judged (sim/power_verdict.h).
  VerdictOptions verdict;
  int threads = 1;
  // Keep each run's row power in at most about this many windows (RunSummary::power); 0: none.
  int power_windows = 0;
  // Memory for the weeks' recorded requests (16 bytes a request: a week of the default 52-server
  // row is about 120 MB), each replayed by every later run of its week at its count; 0: every
  // run synthesizes its week afresh. The results are the same either way.
  std::size_t recording_bytes = std::size_t{1} << 30;
  // Step every capping policy beside each uncapped baseline run, and take a policy's run from
  // the baseline's where it never acted (RunOptions::shadows); false: simulate every run. The
  // results are the same either way.
  bool share_quiet_runs = true;
  // Where the plan's rounds of runs go: nullptr, this process's `threads`; else each round to
  // it, all at once (sim/plan_work.h). The plan is the same either way.
  BatchExecutor* executor = nullptr;
  std::function<void(int done, int total_estimate)> progress;
  const std::atomic<bool>* stop = nullptr;
};

// kInvalidArgument for --weeks/--validate out of range, or above one week on a real trace (the
// same whatever the seed); the scenario's defaults fall back to one week there.
[[nodiscard]] core::Result<CapacityPlan> PlanCapacity(const ResolvedScenario& scenario,
                                                      const PlanOptions& options);
// One run of the plan that PlanCapacity(scenario, options) makes, as it runs it (its week's
// simulation, or an unseen week's power verdict): what a BatchExecutor runs elsewhere, the same
// outcome for the same scenario, options (but threads, executor and progress) and run.
// kInvalidArgument for a week the plan does not have, or bad options as PlanCapacity.
[[nodiscard]] core::Result<Outcome> RunPlanWork(const ResolvedScenario& scenario,
                                                const PlanOptions& options, const Run& run);
// "planning week 2 (seed 2)", "stress growth (load x1.1; seed 1)", "unseen week 1 (seed 1001)":
// week `week` of `plan`.
std::string WeekName(const CapacityPlan& plan, int week);

// The factor on both per-server rates that makes the uncapped row at its provisioned servers
// peak at `target` of its budget (within `tolerance`), by bisection on the factor.
struct Calibration {
  double factor = 1;
  double peak_frac = 0;
  double hp_rate_per_server = 0;
  double lp_rate_per_server = 0;
  int simulations = 0;
};
[[nodiscard]] core::Result<Calibration> CalibrateLoad(const ResolvedScenario& scenario,
                                                      double target, double tolerance,
                                                      const PlanOptions& options);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_CAPACITY_PLANNER_H_
