// headroom: the command-line entry point and composition root. `agent` and `controller` run in
// headroom-daemon (cli/daemon_commands.h), which this process becomes when one is chosen.
#include "cli/app.h"
#include "cli/commands.h"
#include "cli/daemon_commands.h"

int main(int argc, char** argv) {
  using namespace headroom::cli;
  return RunApp(argc, argv,
                [argc, argv](CLI::App& app, const GlobalOptions& global, RunFunction* run) {
                  RegisterGpus(app, global, run);
                  RegisterMonitor(app, global, run);
                  RegisterMeasure(app, global, run);
                  RegisterCharacterize(app, global, run);
                  RegisterModel(app, global, run);
                  RegisterSimulate(app, global, run);
                  RegisterPlan(app, global, run);
                  RegisterReport(app, global, run);
                  RegisterTrace(app, global, run);
                  RegisterMig(app, global, run);
                  RegisterDaemons(app, global, run, ExecDaemonRuns(argc, argv));
                  RegisterCompletion(app, run);
                  RegisterManPages(app, run);
                });
}
