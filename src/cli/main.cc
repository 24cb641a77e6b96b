// headroom: the command-line entry point and composition root. `agent`, `controller` and
// `measure --engine-metrics` run in headroom-daemon (cli/daemon_commands.h,
// cli/measure_command.h), which this process becomes when one is chosen.
#include "cli/app.h"
#include "cli/cluster_commands.h"
#include "cli/commands.h"
#include "cli/daemon_commands.h"
#include "cli/measure_command.h"

int main(int argc, char** argv) {
  using namespace headroom::cli;
  // In the order of `headroom --help`; completion and man pages last, to cover every other.
  const std::vector<CommandGroup> commands = {
      {.names = {"gpus"}, .add = RegisterGpus},
      {.names = {"monitor"}, .add = RegisterMonitor},
      {.names = {"measure"},
       .add =
           [argc, argv](CLI::App& app, const GlobalOptions& global, RunFunction* run) {
             RegisterMeasure(app, global, run, ExecDaemonWatch(argc, argv));
           }},
      {.names = {"characterize"}, .add = RegisterCharacterize},
      {.names = {"model"}, .add = RegisterModel},
      {.names = {"simulate"}, .add = RegisterSimulate},
      {.names = {"plan"}, .add = RegisterPlan},
      {.names = {"check-verdict"}, .add = RegisterCheckVerdict},
      {.names = {"study"}, .add = RegisterStudy},
      {.names = {"plan-task"}, .add = RegisterPlanTask},
      {.names = {"report"}, .add = RegisterReport},
      {.names = {"trace"}, .add = RegisterTrace},
      {.names = {"mig"}, .add = RegisterMig},
      {.names = {"agent", "controller"},
       .add =
           [argc, argv](CLI::App& app, const GlobalOptions& global, RunFunction* run) {
             RegisterDaemons(app, global, run, ExecDaemonRuns(argc, argv));
           }},
      {.names = {"completion"},
       .reads_every_command = true,
       .add = [](CLI::App& app, const GlobalOptions&,
                 RunFunction* run) { RegisterCompletion(app, run); }},
      {.names = {"man-pages"},
       .reads_every_command = true,
       .add = [](CLI::App& app, const GlobalOptions&, RunFunction* run) {
         RegisterManPages(app, run);
       }}};
  return RunApp(argc, argv, commands);
}
