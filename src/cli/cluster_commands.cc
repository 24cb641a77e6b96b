// The flags that send a plan's (or a study's) simulations to a cluster, and `headroom
// plan-task`, the command each of the cluster's tasks runs (app/plan_executor.h).
#include "cli/cluster_commands.h"

#include <iostream>

#include <fmt/format.h>

#include "app/plan_executor.h"
#include "cli/common.h"

namespace headroom::cli {
namespace {

struct PlanTaskCliOptions {
  std::string unit;
  int task = 0;
};

int RunPlanTask(const PlanTaskCliOptions& cli) {
  InstallStopHandlers();
  auto path = app::RunPlanTask({.unit = cli.unit, .task = cli.task, .stop = &StopRequested()});
  if (!path) return ReportError(path.error());
  std::cout << fmt::format("wrote {}\n", *path);
  return kExitOk;
}

}  // namespace

void AddExecutorOptions(CLI::App* cmd, app::ExecutorRequest* e) {
  cmd->add_option("--executor", e->kind,
                  "Where the simulations run: local (this machine's threads) or slurm (each "
                  "round one job array on a Slurm cluster; needs --work-dir) (default: the "
                  "scenario's plan.executor, else local; given, only these flags count)")
      ->check(CLI::IsMember({"local", "slurm"}));
  cluster::SlurmOptions& s = e->slurm;
  cmd->add_option(
      "--work-dir", s.work_dir,
      "Slurm: a directory the cluster's nodes share, by its absolute path: the work "
      "units, the results and the tasks' logs (a plan's are removed when it ends well)");
  cmd->add_option("--slurm-partition", s.partition,
                  "Slurm: the partition (default: the cluster's)");
  cmd->add_option("--slurm-account", s.account, "Slurm: the account to charge");
  cmd->add_option(
      "--slurm-time", s.time_limit,
      "Slurm: the time limit of one task, as sbatch --time reads it, e.g. 30 or 1:00:00");
  cmd->add_option("--slurm-tasks-at-once", s.tasks_at_once,
                  "Slurm: at most this many tasks of a round running at once (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--slurm-retries", s.retries,
                  "Slurm: submit a task that failed, timed out or was preempted again this many "
                  "times before the plan fails")
      ->capture_default_str();
  cmd->add_option("--slurm-runs-per-task", e->runs_per_task,
                  "Slurm: simulations one task runs, one after another (0: one each, or as many "
                  "as keep a round within 256 tasks)")
      ->capture_default_str();
  cmd->add_option("--sbatch-arg", s.sbatch_args,
                  "Slurm: one more sbatch argument, e.g. --sbatch-arg=--qos=low; repeat for more");
}

void RegisterPlanTask(CLI::App& app, const GlobalOptions&, RunFunction* run) {
  auto* cmd = app.add_subcommand(
      "plan-task",
      "One simulation of a plan's round, as a cluster's task runs it (headroom plan --executor "
      "slurm writes its work units)");
  auto* options = OptionsRunBy(cmd, run, RunPlanTask);
  cmd->add_option("unit", options->unit, "The round's work unit (unit.json)")->required();
  cmd->add_option("--task", options->task, "The task's index in the unit's runs")->required();
}

}  // namespace headroom::cli
