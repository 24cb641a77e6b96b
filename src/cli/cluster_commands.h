// The executor flags of `plan` and `study`, and `headroom plan-task` (cluster_commands.cc).
#ifndef HEADROOM_CLI_CLUSTER_COMMANDS_H_
#define HEADROOM_CLI_CLUSTER_COMMANDS_H_

#include <CLI/CLI.hpp>

#include "app/plan.h"
#include "cli/commands.h"

namespace headroom::cli {

// --executor, --work-dir and the --slurm-* flags into `executor`.
void AddExecutorOptions(CLI::App* cmd, app::ExecutorRequest* executor);

void RegisterPlanTask(CLI::App& app, const GlobalOptions& global, RunFunction* run);
// `headroom study FILE` (study_command.cc).
void RegisterStudy(CLI::App& app, const GlobalOptions& global, RunFunction* run);

}  // namespace headroom::cli

#endif  // HEADROOM_CLI_CLUSTER_COMMANDS_H_
