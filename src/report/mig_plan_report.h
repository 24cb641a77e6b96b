// What the MIG plan's report is made of (`headroom mig plan --report`): the planner's options
// (the plan, the baselines, any --layout) as plain values with their instances placed, the
// inputs that produced them, and the plan's headline (the question and its answer) derived from
// the result. Also its JSON, which is what `mig plan --json` prints and DIR/mig-plan.json holds,
// read back strictly, and the table `mig plan` prints. Plain value types and pure functions except
// the file I/O of WriteMigPlanDir/ReadMigPlanDir; thread-compatible.
#ifndef HEADROOM_REPORT_MIG_PLAN_REPORT_H_
#define HEADROOM_REPORT_MIG_PLAN_REPORT_H_

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "format/text_style.h"
#include "mig/planner.h"
#include "report/mig_instances.h"

namespace headroom::report {

inline constexpr const char* kMigPlanFile = "mig-plan.json";

struct MigPlanInputs {
  std::string jobs_file = {};  // as given on the command line
  double power_limit_w = 0;
  std::string objective = {};  // "energy" or "makespan"
  std::optional<double> makespan_bound_s = {};
  std::string version = {};   // headroom's
  MigGeometry geometry = {};  // the GPU and its profiles
};

// A job's part of an option's schedule (mig::JobOutcome without the model).
struct MigJobRun {
  std::string job = {};
  int instance = 0;        // index into MigOption::instances
  std::string slice = {};  // that instance's slice, for the file's readers (MigPlanJson sets it)
  double start_s = 0;
  double end_s = 0;
  double samples_per_s = 0;
  double energy_j = 0;           // activity-weighted attribution
  double energy_sm_share_j = 0;  // by SM share
  bool meets_deadline = true;
  std::string explanation = {};
};

struct MigOption {
  std::string name = {};    // "planned", "whole GPU, one after another", ...
  std::string layout = {};  // canonical text, or "MIG off"
  bool feasible = false;
  std::string reason = {};  // why not, when infeasible
  std::vector<MigInstance> instances = {};
  // The rest only when feasible.
  double energy_j = 0;
  double makespan_s = 0;
  double samples_per_s = 0;
  double samples_per_j = 0;
  // Changes against the whole-GPU baseline (MigPlanReport::Reference), as fractions; nullopt
  // without one. For the file's readers: MigPlanJson sets them.
  std::optional<double> energy_vs_whole_gpu = {};
  std::optional<double> throughput_vs_whole_gpu = {};
  bool meets_bound = true;
  double overrun_s = 0;
  double unattributed_j = 0;
  std::vector<MigJobRun> jobs = {};  // in the jobs file's order

  // Per instance, its jobs' names in run order.
  std::vector<std::vector<std::string>> Queues() const;
};

struct MigPlanReport {
  MigPlanInputs inputs = {};
  int jobs = 0;
  int layouts_considered = 0;
  long schedules_evaluated = 0;
  MigOption plan = {};
  std::vector<MigOption> baselines = {};  // the first: every job one after another, whole GPU
  std::vector<MigOption> layouts = {};    // --layout, in order
  // The planner's explanation of each job's place in the plan, in the jobs file's order, kept also
  // when the plan is infeasible (where each job would run, and that it cannot), unlike plan.jobs.
  // What MigPlanText prints; not in mig-plan.json, so read back from the plan's jobs.
  std::vector<std::string> why = {};

  // The plan, the baselines, then the --layout options.
  std::vector<const MigOption*> Options() const;
  // The whole-GPU baseline when it is feasible (the reference of every change), else nullptr.
  const MigOption* Reference() const;
};

MigPlanReport MigPlanReportOf(const mig::PlanResult& result, MigPlanInputs inputs, int jobs);

// "Which MIG layout runs these 4 training jobs on one h200-141gb-sxm with the least energy?"
std::string MigPlanQuestion(const MigPlanReport& report);
// "Layout 3g@0,2g@4,1g@6,1g@7 on the h200-141gb-sxm: 29.7% less energy, +44.6% throughput vs
// jobs one after another on the whole GPU" (PlacedLayoutName), or why there is no such answer.
std::string MigPlanAnswer(const MigPlanReport& report);

// What `mig plan --json` prints and mig-plan.json holds: the plan, baselines and layouts (each
// with its instances and jobs) plus "inputs".
nlohmann::ordered_json MigPlanJson(const MigPlanReport& report);

// What `mig plan` prints: the heading, one row per option (the plan in green, changes against the
// whole-GPU baseline), the plan's explanation per job and how much the search covered.
std::string MigPlanText(const MigPlanReport& report, const format::TextStyle& style);

// Creates `dir` if needed and writes mig-plan.json.
[[nodiscard]] core::Status WriteMigPlanDir(const std::string& dir, const MigPlanReport& report);

// kNotFound when `dir` or its mig-plan.json is missing; kInvalidArgument, naming the file and the
// field, when it does not hold what WriteMigPlanDir writes.
[[nodiscard]] core::Result<MigPlanReport> ReadMigPlanDir(const std::string& dir);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MIG_PLAN_REPORT_H_
