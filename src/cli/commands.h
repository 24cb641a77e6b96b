// Registration of the subcommands. Each Register* adds its subcommand to `app`, binding its
// flags, and on selection stores in `*run` the function that executes it and returns the exit
// code. Not thread-safe (CLI start-up).
#ifndef HEADROOM_CLI_COMMANDS_H_
#define HEADROOM_CLI_COMMANDS_H_

#include <functional>
#include <memory>

#include <CLI/CLI.hpp>

#include "cli/common.h"

namespace headroom::cli {

using RunFunction = std::function<int()>;

// The options of `cmd`, owned by its callback (CLI11 writes them while parsing): on selection
// `*run` becomes `execute(options)`. REQUIRES: `run` outlives the parse.
template <typename Options>
Options* BindOptions(CLI::App* cmd, RunFunction* run, std::function<int(const Options&)> execute) {
  auto options = std::make_shared<Options>();
  cmd->callback(
      [run, options, execute] { *run = [options, execute] { return execute(*options); }; });
  return options.get();
}
// BindOptions for a command's Run function, with or without the global options.
// REQUIRES: `global` outlives the run.
template <typename Options>
Options* OptionsRunBy(CLI::App* cmd, RunFunction* run, int (*execute)(const Options&)) {
  return BindOptions<Options>(cmd, run, execute);
}
template <typename Options>
Options* OptionsRunBy(CLI::App* cmd, RunFunction* run, const GlobalOptions& global,
                      int (*execute)(const GlobalOptions&, const Options&)) {
  return BindOptions<Options>(
      cmd, run, [&global, execute](const Options& options) { return execute(global, options); });
}

void RegisterGpus(CLI::App& app, const GlobalOptions& global, RunFunction* run);
void RegisterMonitor(CLI::App& app, const GlobalOptions& global, RunFunction* run);
void RegisterCharacterize(CLI::App& app, const GlobalOptions& global, RunFunction* run);
void RegisterMig(CLI::App& app, const GlobalOptions& global, RunFunction* run);
void RegisterModel(CLI::App& app, const GlobalOptions& global, RunFunction* run);
void RegisterSimulate(CLI::App& app, const GlobalOptions& global, RunFunction* run);
void RegisterPlan(CLI::App& app, const GlobalOptions& global, RunFunction* run);
void RegisterCheckVerdict(CLI::App& app, const GlobalOptions& global, RunFunction* run);
void RegisterReport(CLI::App& app, const GlobalOptions& global, RunFunction* run);
void RegisterTrace(CLI::App& app, const GlobalOptions& global, RunFunction* run);
// `headroom completion bash`: the completion script for `app` as registered so far; register it
// last, so the script covers every other command.
void RegisterCompletion(CLI::App& app, RunFunction* run);
// `headroom man-pages --out DIR`: a man page per command (cli/man_pages.h).
void RegisterManPages(CLI::App& app, RunFunction* run);
// Subcommands of `headroom model`.
void AddModelFit(CLI::App* model, const GlobalOptions& global, RunFunction* run);
void AddModelPredict(CLI::App* model, const GlobalOptions& global, RunFunction* run);
void AddModelValidate(CLI::App* model, const GlobalOptions& global, RunFunction* run);
// Subcommands of `headroom mig` that read or change GPUs (mig_device_command.cc).
void AddMigShow(CLI::App* mig, const GlobalOptions& global, RunFunction* run);
void AddMigApply(CLI::App* mig, const GlobalOptions& global, RunFunction* run);
// `mig show --profiles` (mig_profiles_command.cc): the driver's GPU-instance profiles beside the
// catalog's; exit 0 when they agree, 1 on any difference.
int RunMigProfileCheck(const GlobalOptions& global, const BackendOptions& backend, bool json);
// Subcommands of `headroom mig` on the slice model.
void AddMigPlan(CLI::App* mig, const GlobalOptions& global, RunFunction* run);
void AddMigWorkloads(CLI::App* mig, const GlobalOptions& global, RunFunction* run);
void AddMigCharacterize(CLI::App* mig, const GlobalOptions& global, RunFunction* run);

}  // namespace headroom::cli

#endif  // HEADROOM_CLI_COMMANDS_H_
