// What `headroom mig plan JOBS.yaml` does below its flags: the jobs file read against the MIG
// catalogs with the command line's overrides, the layout and job assignment planned (mig::Plan:
// least energy or makespan, beside the baselines and any extra layouts), and the result written
// as mig-plan.json, with report.html when asked. Thread-compatible.
#ifndef HEADROOM_APP_MIG_PLAN_H_
#define HEADROOM_APP_MIG_PLAN_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "report/mig_plan_report.h"

namespace headroom::app {

struct MigPlanRequest {
  std::string catalog_dir = {};           // empty: the built-in catalogs
  std::string file = {};                  // the jobs file (YAML, docs/mig.md)
  std::string objective = {};             // "energy" or "makespan"; empty: the file's
  std::string makespan_bound = {};        // as --makespan-bound; empty: the file's
  std::vector<std::string> layouts = {};  // as --layout: also scored
  std::string out_dir = {};               // where mig-plan.json goes; empty: nothing written
  bool report = false;                    // report.html as well; REQUIRES: out_dir
  std::string version = {};               // mig-plan.json's
  std::function<void(const std::string&)> on_warning = {};  // a plot gnuplot could not render
};

struct MigPlanResult {
  report::MigPlanReport plan;
  std::optional<std::string> report_path = {};  // report.html, when written
};

// Errors name the jobs file (its line and field), the flag (--makespan-bound, --layout) or the
// directory that cannot be written.
[[nodiscard]] core::Result<MigPlanResult> MigPlan(const MigPlanRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_MIG_PLAN_H_
