// headroom-daemon: `headroom agent`, `headroom controller` and `headroom measure
// --engine-metrics`, the only commands that need the HTTP and TLS stack. Started by `headroom`
// (cli/daemon_exec.cc) with that command line.
#include "cli/app.h"
#include "cli/daemon_commands.h"
#include "cli/measure_command.h"

int main(int argc, char** argv) {
  using namespace headroom::cli;
  return RunApp(argc, argv,
                {{.names = {"agent", "controller"},
                  .add =
                      [](CLI::App& app, const GlobalOptions& global, RunFunction* run) {
                        RegisterDaemons(app, global, run,
                                        {.agent = RunAgent, .controller = RunController});
                      }},
                 {.names = {"measure"},
                  .add = [](CLI::App& app, const GlobalOptions& global, RunFunction* run) {
                    RegisterMeasure(app, global, run, RunEngineWatch);
                  }}});
}
