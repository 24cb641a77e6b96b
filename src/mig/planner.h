// The MIG planner: for a set of training jobs on one GPU, the partition (a MIG layout, or the
// whole GPU with MIG off), the job-to-instance assignment and each instance's job order that
// minimize energy under a makespan bound (or minimize makespan), beside three baselines: every job
// one after another on the whole GPU, a balanced layout (the GPU in two halves), and seven 1g
// instances. Every option is scored by the same event-driven evaluation on the SliceModel. Pure;
// thread-safe.
#ifndef HEADROOM_MIG_PLANNER_H_
#define HEADROOM_MIG_PLANNER_H_

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "mig/layout.h"
#include "mig/slice_model.h"
#include "mig/training_workload.h"

namespace headroom::mig {

struct PlanJob {
  std::string name = {};
  MeasuredWorkload workload = {};
  WorkloadFit fit = {};
  int batch = 0;
  double samples = 0;
  std::optional<double> deadline_s = {};  // finish within this many seconds of the start
  int priority = 0;                       // higher runs earlier within an instance
};

enum class Objective {
  kEnergy,    // least energy for the job set (equivalently, most samples per joule)
  kMakespan,  // earliest finish of the whole set
};

struct PlanRequest {
  std::vector<PlanJob> jobs = {};
  Objective objective = Objective::kEnergy;
  std::optional<double> makespan_bound_s = {};
  // Profile classes whose maximal layouts are searched ("1g", "1g.2x", "2g", ...).
  std::vector<std::string> profile_classes = {"1g", "2g", "3g", "4g", "7g"};
  // Layouts to score beside the baselines (e.g. one a user runs today), each with its best
  // assignment; they are candidates too.
  std::vector<Layout> extra_layouts = {};
};

// A job's part of an option's schedule.
struct JobOutcome {
  std::string job = {};
  int instance = -1;  // index into PlanOption::slices
  double start_s = 0;
  double end_s = 0;
  double samples_per_s = 0;      // average over its run
  double energy_activity_j = 0;  // attribution: idle by SM share, dynamic by activity
  double energy_sm_share_j = 0;  // attribution: whole-GPU energy by SM share
  bool meets_deadline = true;
  std::string explanation = {};  // one line: why here, how fast, what it costs
};

// Whole-GPU power over one interval of the schedule (constant between job ends).
struct PowerSegment {
  double start_s = 0;
  double end_s = 0;
  double power_w = 0;
  double clock_mhz = 0;
};

struct PlanOption {
  std::string name = {};              // "planned", "whole GPU, one after another", ...
  std::optional<Layout> layout = {};  // nullopt: MIG off
  std::vector<Slice> slices = {};
  std::vector<std::vector<int>> queues = {};  // per slice: job indices in run order
  bool feasible = false;
  std::string infeasible_reason = {};  // e.g. the job that does not fit anywhere
  double energy_j = 0;
  double makespan_s = 0;
  double samples_per_s = 0;  // all samples / makespan
  double samples_per_j = 0;
  double unattributed_j = 0;          // idle share of instances with no job running
  bool meets_bound = true;            // makespan bound and every deadline
  double overrun_s = 0;               // makespan beyond the bound plus every job's lateness
  std::vector<JobOutcome> jobs = {};  // in request order
  std::vector<PowerSegment> power = {};
};

struct PlanResult {
  PlanOption best = {};
  std::vector<PlanOption> baselines = {};
  std::vector<PlanOption> extra = {};  // PlanRequest::extra_layouts, in order
  int layouts_considered = 0;
  long schedules_evaluated = 0;
};

// Scores one option: runs the queues side by side, each instance's jobs one after another.
// `option.slices` and `option.queues` must be set; fills the rest.
void EvaluateOption(const SliceModel& model, const PlanRequest& request, PlanOption& option);

// kInvalidArgument for an empty job set, a job with no samples or an invalid extra layout;
// otherwise a result whose best
// option is feasible when any candidate is (the baselines are candidates, so the plan never
// scores worse than a feasible baseline on the objective).
[[nodiscard]] core::Result<PlanResult> Plan(const SliceModel& model, const PlanRequest& request);

// True when `a` is better than `b` under `objective`: feasible first, then less overrun of the
// bound and deadlines, then the objective, then the other measure.
bool Better(const PlanOption& a, const PlanOption& b, Objective objective);

}  // namespace headroom::mig

#endif  // HEADROOM_MIG_PLANNER_H_
