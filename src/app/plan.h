// What `headroom plan` does below its flags: the scenario bound with its overrides, the plan's
// options from the flags, the capacity search (sim::PlanCapacity), and the --out directory
// (plan.json, the chosen policy's row power) with report.html; or, with --calibrate, the
// per-server load that makes the uncapped row peak at the scenario's target.
#ifndef HEADROOM_APP_PLAN_H_
#define HEADROOM_APP_PLAN_H_

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/row_scenario.h"
#include "cluster/slurm_array.h"
#include "core/result.h"
#include "report/plan_report.h"
#include "sim/capacity_planner.h"

namespace headroom::app {

// Where `plan --report` writes when no --out is given.
inline constexpr const char* kDefaultPlanDir = "headroom-plan";

// Where a plan's simulations run (app/plan_executor.h): "local" (this process's threads) or
// "slurm" (a job array a round on a Slurm cluster, with its options).
struct ExecutorRequest {
  std::string kind = {};  // empty: the scenario's plan.executor, else local
  cluster::SlurmOptions slurm = {};
  int runs_per_task = 0;  // runs a Slurm task runs; 0: rounds of at most 256 tasks
};

struct PlanRequest {
  ScenarioRequest scenario = {};
  std::string trace = {};     // as --trace; empty: the scenario's workload
  std::string policies = {};  // comma-separated, or "all"; empty: the scenario's
  int threads = 0;            // simulations in parallel; 0: every core
  std::optional<int> weeks = {};
  std::optional<int> validate = {};
  std::string max_weekly_risk = {};  // a percentage, "5%" or "5"; empty: the scenario's
  std::string confidence = {};       // a percentage, "95%"; empty: the scenario's
  std::optional<int> risk_beyond = {};
  std::vector<std::string> stress = {};  // stress case specs; "none" drops the scenario's
  std::string shed = {};     // --shed "25%:3h[:60s]"; empty: the scenario's plan.demand_response
  std::string out = {};      // empty: nothing written (kDefaultPlanDir with report)
  bool report = false;       // report.html written into out
  std::string version = {};  // plan.json's
  ExecutorRequest executor = {};
  const std::atomic<bool>* stop = nullptr;
  std::function<void(int done, int total)> progress = {};   // simulations run, of those planned
  std::function<void(const std::string&)> on_warning = {};  // a plot the report could not draw
};

struct PlanOutcome {
  report::PlanReport data;  // the plan and its inputs (what --json prints)
  sim::Scenario scenario;   // as resolved, for the printed summary
  int threads = 0;          // as used
  std::string ran_on = {};  // "on 2 threads", "through Slurm: 7 job arrays, ..."

  std::string out_dir = {};                // where it was written; empty: nowhere
  std::optional<std::string> report = {};  // report.html's path
};

// kInvalidArgument naming the flag for bad input; the search's and the writers' errors.
[[nodiscard]] core::Result<PlanOutcome> Plan(const PlanRequest& request);

// The search's options from the request's flags (not its executor): kInvalidArgument naming a
// bad flag.
[[nodiscard]] core::Result<sim::PlanOptions> PlanOptionsOf(const PlanRequest& request);

struct LoadCalibration {
  sim::Calibration calibration;
  sim::Scenario scenario;
  double target = 0;  // the uncapped row's peak, a fraction of its budget
};

// `plan --calibrate`: the request's scenario and options, the load calibrated instead of planned.
[[nodiscard]] core::Result<LoadCalibration> CalibrateLoad(const PlanRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_PLAN_H_
