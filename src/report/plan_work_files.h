// The files through which a plan's rounds run elsewhere (sim::BatchExecutor, app/plan_on_slurm.h):
//   a round's work unit (every task of the round reads it): the plan's id, the request the
//   tasks rebuild the plan's scenario and options from (as the app wrote it), the runs, and how
//   many of them each task runs (task i: runs i*k to i*k + k - 1);
//   each task's result beside it: the plan's id, the task and its runs, and each run's outcome
//   (its whole summary, row power windows included, and the quiet shadows).
// Doubles are written exactly (17 significant digits), so a result read back is the outcome the
// task had. Reading is strict: each error names the file and the field. Thread-compatible.
#ifndef HEADROOM_REPORT_PLAN_WORK_FILES_H_
#define HEADROOM_REPORT_PLAN_WORK_FILES_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "sim/plan_work.h"

namespace headroom::report {

struct WorkUnit {
  std::string plan_id = {};
  nlohmann::json request = {};  // an object
  std::vector<sim::Run> runs = {};
  int runs_per_task = 1;
};

// The tasks a unit makes (runs_per_task at a time), and the runs of task `task`: [first, end).
int TaskCount(const WorkUnit& unit);
std::pair<std::size_t, std::size_t> TaskRuns(const WorkUnit& unit, int task);

struct WorkResult {
  std::string plan_id = {};
  int task = 0;
  std::vector<sim::Run> runs = {};
  std::vector<sim::Outcome> outcomes = {};  // one per run, in order
};

[[nodiscard]] core::Status WriteWorkUnit(const std::string& path, const WorkUnit& unit);
// kNotFound when `path` is missing; kInvalidArgument naming the field otherwise (runs_per_task
// below 1 too).
[[nodiscard]] core::Result<WorkUnit> ReadWorkUnit(const std::string& path);

[[nodiscard]] core::Status WriteWorkResult(const std::string& path, const WorkResult& result);
[[nodiscard]] core::Result<WorkResult> ReadWorkResult(const std::string& path);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_PLAN_WORK_FILES_H_
