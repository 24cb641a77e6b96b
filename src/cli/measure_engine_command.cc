// `headroom measure --engine-metrics URL --duration D`, as headroom-daemon runs it: a running
// serving engine watched, its J per prompt and generated token printed.
#include <iostream>

#include "cli/measure_command.h"
#include "console/terminal.h"
#include "report/token_energy_report.h"

namespace headroom::cli {

int RunEngineWatch(const GlobalOptions& global, const MeasureCliOptions& options) {
  InstallStopHandlers();  // Ctrl-C ends the watch early; what was seen is printed
  app::EngineWatchRequest request = options.watch;
  request.catalog_dir = global.catalog_dir;
  request.backend = options.request.backend;
  request.stop = &StopRequested();
  request.on_warning = PrintWarning;
  auto watch = app::WatchEngine(request);
  if (!watch) return ReportError(watch.error());
  std::cout << (options.json ? report::TokenEnergyJson(*watch).dump(2) + "\n"
                             : report::TokenEnergyText(*watch, StdoutStyle()));
  return kExitOk;
}

}  // namespace headroom::cli
