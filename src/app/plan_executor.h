// Where a plan's simulations run: this process's threads (the default), or a Slurm cluster,
// each round of the plan one job array whose tasks run `headroom plan-task` on a work unit in a
// working directory the nodes share (report/plan_work_files.h) and write their results beside
// it. The tasks rebuild the plan's scenario and options from the request in the unit, so a plan
// through Slurm is the plan through the local threads, byte for byte.
#ifndef HEADROOM_APP_PLAN_EXECUTOR_H_
#define HEADROOM_APP_PLAN_EXECUTOR_H_

#include <atomic>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "app/plan.h"
#include "cluster/slurm_array.h"
#include "core/result.h"
#include "sim/plan_work.h"

namespace headroom::app {

// A plan's (or a study's) executor by its flags: "local" or "slurm", with Slurm's options.
// Null for "local"; kInvalidArgument for another kind or bad Slurm options (CheckSlurm), naming
// the flag. `request` is what the tasks rebuild the plan from (PlanTaskRequestJson).
[[nodiscard]] core::Result<std::unique_ptr<sim::BatchExecutor>> MakePlanExecutor(
    const ExecutorRequest& executor, nlohmann::json request);

// The part of a plan's request its tasks need, as JSON: the scenario and its overrides (paths
// made absolute: a task runs in its round's directory), the plan's weeks, risk, stress cases and
// policies, and the row power it keeps (`power_windows`).
nlohmann::json PlanTaskRequestJson(const PlanRequest& request, int power_windows);

struct PlanTaskRequest {
  std::string unit;  // a round's work unit
  int task = 0;      // its run to do: runs[task]
  const std::atomic<bool>* stop = nullptr;
};

// `headroom plan-task UNIT --task N`: the run, its result written beside the unit
// (result-N.json); returns that path. Errors name the unit and its field.
[[nodiscard]] core::Result<std::string> RunPlanTask(const PlanTaskRequest& request);

// The result file of task `task` of the round whose unit is `unit`.
std::string PlanTaskResultPath(const std::string& unit, int task);

}  // namespace headroom::app

#endif  // HEADROOM_APP_PLAN_EXECUTOR_H_
