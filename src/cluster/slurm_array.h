// Rounds of work on a Slurm cluster through its own commands: each round one job array (sbatch
// --array) whose tasks run a command on files in a working directory the nodes share, waited for
// with squeue (no accounting database needed), the tasks that did not give their result submitted
// again a bounded number of times, everything cancelled (scancel) on a stop or an error. What a
// task's result is, and whether it is right, is the caller's (ArrayRound::check). Thread-safe
// (no state beyond the call).
#ifndef HEADROOM_CLUSTER_SLURM_ARRAY_H_
#define HEADROOM_CLUSTER_SLURM_ARRAY_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/time.h"

namespace headroom::cluster {

struct SlurmOptions {
  std::string partition = {};  // empty: the cluster's default
  std::string account = {};    // empty: the user's default
  std::string time_limit =
      {};  // per task, as sbatch --time reads it ("30", "1:00:00"); empty: the partition's
  int tasks_at_once = 0;                      // the array's %N; 0: as many as the cluster runs
  std::vector<std::string> sbatch_args = {};  // more sbatch arguments, each one word
  std::string work_dir = {};  // shared with the nodes: the units, results and tasks' logs
  int retries = 2;            // submissions again of a task that gave no right result
  core::Duration poll = std::chrono::seconds(1);  // squeue's period
};

// What can be checked before any work: sbatch, squeue and scancel on the PATH, the working
// directory an existing, writable, absolute directory, the numbers in range. One error naming
// the option (by its flag) or the program.
[[nodiscard]] core::Status CheckSlurm(const SlurmOptions& options);

// The word that stands for the task's index in ArrayRound::command.
inline constexpr const char* kTaskIndex = "{task}";

struct ArrayRound {
  std::string name;  // the job's name, e.g. "headroom-plan-3f2a-r4"
  std::string dir;   // the round's directory (created): its script and the tasks' logs
  int tasks = 0;
  // The program and its arguments; kTaskIndex within any of them becomes the task's index.
  std::vector<std::string> command;
  // Whether task i gave its right result; the reason (naming the file) when not. A task that
  // Slurm calls completed but fails this has failed.
  std::function<core::Status(int task)> check;
};

// Runs the round to its end: Ok once every task's check passes. kUnavailable for a task that
// failed every try (its Slurm state and exit code, its log's last line) or for sbatch's own
// refusal (its message); kCancelled soon after `stop` is set.
[[nodiscard]] core::Status RunArrayRound(const SlurmOptions& options, const ArrayRound& round,
                                         const std::atomic<bool>* stop);

}  // namespace headroom::cluster

#endif  // HEADROOM_CLUSTER_SLURM_ARRAY_H_
