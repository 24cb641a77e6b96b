// What the capacity plan's report is made of: the plan itself, the inputs that produced it, and
// the row power of the chosen policy at its capacity, reduced to a few thousand windows so that
// it can be kept beside plan.json and drawn. Also the plan's headline (the question and its
// answer), derived from the result. Plain value types and pure functions; thread-compatible.
#ifndef HEADROOM_REPORT_PLAN_REPORT_H_
#define HEADROOM_REPORT_PLAN_REPORT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/capacity_planner.h"
#include "sim/demand_response.h"
#include "sim/row_simulator.h"
#include "sim/scenario.h"

namespace headroom::report {

struct PlanInputs {
  std::string scenario;  // name
  std::string description;
  std::string scenario_source;  // the file it was read from, or "built-in"
  std::string trace;            // as --trace; empty: the scenario's workload
  std::string engine;           // the serving engine assumed, with its version
  std::uint64_t seed = 0;
  std::string version;                 // headroom's
  std::vector<std::string> overrides;  // "--set key=value" policy constants, in order
  sim::Slo slo;
  double t1_frac = 0;  // the policies' T1 and T2 thresholds, fractions of the budget
  double t2_frac = 0;
};

// Row power over time of one run, in windows of equal length: mean and highest metered sample.
using PowerWindow = sim::PowerWindow;

// About this many windows of a plan's row power are kept for its report (a week in 5-minute
// windows, an hour in 2-second ones).
inline constexpr int kPlanPowerWindows = 2000;

struct PowerTrace {
  std::string policy;
  int servers = 0;
  double budget_w = 0;
  double window_s = 0;
  std::vector<PowerWindow> windows = {};
  std::vector<double> brake_s = {};  // times the brake engaged
  // Lowered budgets in force (sim::BudgetEvent), drawn as the budget's steps.
  struct Lowered {
    double start_s = 0;
    double end_s = 0;
    double budget_w = 0;
  };
  std::vector<Lowered> lowered = {};
};

struct PlanReport {
  sim::CapacityPlan plan;
  PlanInputs inputs;
  std::optional<PowerTrace> power = {};  // empty: not simulated (the plot is left out)
  // Demand response at the answers (plan --shed, plan.demand_response); empty: none asked.
  std::optional<sim::ShedPlan> shed = {};
};

// The row power a plan kept of one of its runs (PlanOptions::power_windows); nullopt when it
// kept none.
std::optional<PowerTrace> PlanRunPowerTrace(const sim::RunSummary& run);
// REQUIRES: result.power holds the metered series (RunOptions::keep_power_series).
// Windows of a whole number of metering periods, at most `max_windows` of them.
PowerTrace ReducePowerTrace(const sim::RowResult& result, int max_windows);
// The windows alone (policy, servers, budget and brakes left empty), from metered samples in
// time order, each stamped at the end of its metering period.
PowerTrace ReducePowerSamples(const std::vector<sim::PowerSample>& power, int max_windows);

// How many of the plan's unseen weeks held at the policy's answer, and what the planning weeks
// alone allowed when the unseen ones lowered it: "2/2", "2/2, was 51", "0/2"; "-" without unseen
// weeks.
std::string UnseenWeeks(const sim::CapacityPlan& plan, const sim::PolicyPlan& p);
// A count's unseen weeks with a power event, of those judged, and those near the budget left
// verdicts: "2/59" or "0/59 (+3 near)".
std::string UnseenEvents(const sim::CountRisk& risk);

// One week a policy ran at its answer (the planning weeks, stress cases and unseen weeks where
// the plan simulated max_servers): the report's per-week table.
struct WeekAtAnswer {
  std::string week;                      // sim::WeekName
  const sim::RunSummary* run = nullptr;  // into plan.runs
  // Against the uncapped row at the same servers and week; nullopt for the uncapped row itself
  // or when the plan did not run it there.
  std::optional<sim::Impact> impact = {};
};
// In week order; empty when the policy fits no servers.
std::vector<WeekAtAnswer> WeeksAtAnswer(const sim::CapacityPlan& plan, const sim::PolicyPlan& p);

// "How many servers fit in the row's 260 kW budget (provisioned for 40) while the SLO holds?"
std::string PlanQuestion(const sim::CapacityPlan& plan);
// "polca fits 49 servers, +22.5% over 40, LP P50 +4.1%, 0 brakes (uncapped: 40)": the chosen
// policy, the latency change nearest its SLO bound, and what the uncapped row fits.
std::string PlanAnswer(const sim::CapacityPlan& plan, const sim::Slo& slo);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_PLAN_REPORT_H_
