// The directory `headroom plan --out DIR` writes, and reads back for `headroom report DIR`:
//   plan.json      the plan (its policies with their runs, the risk past each answer), "inputs",
//                  "runs" (every simulation of the search) and "row_power" (the chosen policy's
//                  run at its capacity, or null): one field table, read and written
//   row-power.csv  that run's row power in windows: start_s,mean_w,max_w
// Reading is strict: a missing file or field is an error naming the file and the field.
// Thread-compatible.
#ifndef HEADROOM_REPORT_PLAN_DIR_H_
#define HEADROOM_REPORT_PLAN_DIR_H_

#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "report/plan_report.h"

namespace headroom::report {

inline constexpr const char* kPlanFile = "plan.json";
inline constexpr const char* kRowPowerFile = "row-power.csv";

// plan.json's content (also what `plan --json` prints).
nlohmann::ordered_json PlanReportJson(const PlanReport& report);

// Creates `dir` if needed and writes plan.json (and row-power.csv with a power trace).
[[nodiscard]] core::Status WritePlanDir(const std::string& dir, const PlanReport& report);

// kNotFound when `dir` or its plan.json is missing; kInvalidArgument, naming the file and the
// field, when a file does not hold what WritePlanDir writes.
[[nodiscard]] core::Result<PlanReport> ReadPlanDir(const std::string& dir);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_PLAN_DIR_H_
