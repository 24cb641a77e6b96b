// `headroom measure`: a command measured (`measure -- CMD`), or a running serving engine watched
// from outside (`measure --engine-metrics URL --duration D`, issue 51). The watch GETs the
// engine's metrics page, so it runs in headroom-daemon, the only executable that links the HTTP
// and TLS stack: `headroom` registers the flags and, when --engine-metrics is given, execs
// headroom-daemon with the same command line (as for `agent` and `controller`,
// cli/daemon_commands.h). Not thread-safe (CLI start-up).
#ifndef HEADROOM_CLI_MEASURE_COMMAND_H_
#define HEADROOM_CLI_MEASURE_COMMAND_H_

#include <functional>

#include <CLI/CLI.hpp>

#include "app/engine_watch.h"
#include "app/measure.h"
#include "cli/commands.h"

namespace headroom::cli {

struct MeasureCliOptions {
  app::MeasureRequest request;
  app::EngineWatchRequest watch;  // --engine-metrics and its flags
  bool json = false;
};

// What `measure --engine-metrics` runs.
using EngineWatchRun = std::function<int(const GlobalOptions&, const MeasureCliOptions&)>;

// Registers `measure`; --engine-metrics runs `watch`. REQUIRES: `global` outlives the run.
void RegisterMeasure(CLI::App& app, const GlobalOptions& global, RunFunction* run,
                     EngineWatchRun watch);

// headroom's watch: exec headroom-daemon with `argv` (cli/daemon_exec.cc). REQUIRES: `argv`
// outlives the run.
EngineWatchRun ExecDaemonWatch(int argc, char** argv);

// headroom-daemon's watch (cli/measure_engine_command.cc): app::WatchEngine, then the table or
// the JSON on stdout.
int RunEngineWatch(const GlobalOptions& global, const MeasureCliOptions& options);

}  // namespace headroom::cli

#endif  // HEADROOM_CLI_MEASURE_COMMAND_H_
