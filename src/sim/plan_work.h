// A capacity plan's unit of work and where it runs. A job is a policy at a server count on one
// of the plan's weeks; a run is a job as run (stopping or not at its first power event); its
// outcome is the run's summary and the shadowed policies that never acted in it. The plan runs
// its jobs on threads of its own (sim/plan_runs.h's RunPool) or hands each round of them to a
// BatchExecutor, which runs them elsewhere at once (a cluster's scheduler: app/plan_on_slurm.h)
// through RunPlanWork (sim/capacity_planner.h) and must give the same outcomes. Plain data and
// an interface; thread-compatible.
#ifndef HEADROOM_SIM_PLAN_WORK_H_
#define HEADROOM_SIM_PLAN_WORK_H_

#include <atomic>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/run_summary.h"

namespace headroom::sim {

struct Job {
  std::string policy;
  int servers = 0;
  int week = 0;
  // An unseen week run whole and exactly, where its power verdict came near the budget and the
  // count's fit depends on it (it then stands for the verdict).
  bool whole = false;
  auto operator<=>(const Job&) const = default;
};

// A job as run: `stops`, whether it stops at its first power event (every run but the uncapped
// baseline's, whose latencies the others are compared with, unless only its power is wanted).
struct Run {
  Job job;
  bool stops = true;
  auto operator<=>(const Run&) const = default;
};

// What a run gives: its summary and the shadows that never acted in it.
struct Outcome {
  RunSummary summary;
  std::vector<std::string> quiet;
};

// Runs a round of a plan's runs elsewhere, all at once.
class BatchExecutor {
 public:
  virtual ~BatchExecutor() = default;
  // Every run's outcome, in the order of `runs`; an error (naming the run that failed and why)
  // fails the plan. Returns kCancelled soon after `stop` is set, what it started stopped.
  [[nodiscard]] virtual core::Result<std::vector<Outcome>> RunBatch(
      const std::vector<Run>& runs, const std::atomic<bool>* stop) = 0;
  // Where and how the runs went so far, for the plan's last line, e.g. "through Slurm: 7 job
  // arrays, 11 tasks".
  virtual std::string Describe() const = 0;
};

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_PLAN_WORK_H_
