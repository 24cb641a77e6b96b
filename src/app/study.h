// What `headroom study FILE` does below its flags: the study file's plans (each a scenario with
// its overrides and plan settings), each crossed with every combination of the file's grid, run
// one after another through the same executor as `plan` (the local threads or Slurm:
// app/plan_executor.h), and the comparison written (report/study_report.h): study.json,
// report.html and each plan's own directory under plans/.
//
// The file:
//   name: rows                       # required
//   description: the A100 and the H100 row
//   plans:                           # required, at least one
//     - name: a100                   # required, unique
//       scenario: polca-a100-row     # a built-in name or a YAML file (relative to the study)
//       slo: {lp_p50_e2e_pct: 10}    # as plan --slo, --serving, --set (maps of key: value)
//       serving: {}
//       set: {}
//       seed: 1                      # and plan's: trace, policies, weeks, validate,
//                                    # max_weekly_risk, confidence, risk_beyond, stress
//   grid:                            # optional: every combination, for every plan
//     slo.lp_p50_e2e_pct: [5, 10]    # slo.KEY, serving.KEY, set.KEY, seed, max_weekly_risk
#ifndef HEADROOM_APP_STUDY_H_
#define HEADROOM_APP_STUDY_H_

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "app/plan.h"
#include "core/result.h"
#include "report/study_report.h"

namespace headroom::app {

// Where `study --report` writes when no --out is given.
inline constexpr const char* kDefaultStudyDir = "headroom-study";

struct StudyRequest {
  std::string file;
  ExecutorRequest executor = {};
  int threads = 0;       // each plan's, locally; 0: every core
  std::string out = {};  // empty: nothing written (kDefaultStudyDir with report)
  bool report = false;   // report.html written into out
  std::string version = {};
  const std::atomic<bool>* stop = nullptr;
  // Before each plan: its index, how many, its name.
  std::function<void(int plan, int plans, const std::string& name)> on_plan = {};
  std::function<void(int done, int total)> progress = {};  // the plan's simulations
  std::function<void(const std::string&)> on_warning = {};
};

struct StudyOutcome {
  report::StudyReport data;
  std::string out_dir = {};                // empty: nowhere
  std::optional<std::string> report = {};  // report.html's path
};

// kInvalidArgument naming the file, line and field for a bad study file, or the plan for a bad
// plan; each plan's own errors, named by the plan.
[[nodiscard]] core::Result<StudyOutcome> RunStudy(const StudyRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_STUDY_H_
