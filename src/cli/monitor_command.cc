// `headroom monitor`: stream live telemetry of the selected GPUs.
#include <iostream>

#include "app/monitor.h"
#include "cli/commands.h"

namespace headroom::cli {
namespace {

struct MonitorOptions {
  BackendOptions backend;
  std::string interval = "1s";
  std::string duration;  // empty: until Ctrl-C
  std::string format = "table";
  bool virtual_time = false;
};

int RunMonitor(const GlobalOptions& global, const MonitorOptions& options) {
  InstallStopHandlers();
  auto done = app::Monitor({.catalog_dir = global.catalog_dir,
                            .backend = options.backend,
                            .interval = options.interval,
                            .duration = options.duration,
                            .format = options.format,
                            .virtual_time = options.virtual_time,
                            .stop = &StopRequested(),
                            .out = &std::cout});
  if (!done) return ReportError(done.error());
  return kExitOk;
}

}  // namespace

void RegisterMonitor(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  CLI::App* cmd =
      app.add_subcommand("monitor", "Stream live GPU telemetry (power, energy, clocks)");
  auto* options = OptionsRunBy(cmd, run, global, RunMonitor);
  AddBackendOptions(cmd, &options->backend);
  cmd->add_option("--interval", options->interval, "Sampling interval, 10ms..60s")
      ->capture_default_str();
  cmd->add_option("--duration", options->duration, "Stop after this long (default: until Ctrl-C)");
  cmd->add_option("--format", options->format, "Output format: table, csv or jsonl")
      ->capture_default_str();
  cmd->add_flag("--virtual-time", options->virtual_time,
                "Sim backend only: run on simulated time, without waiting (needs --duration)");
}

}  // namespace headroom::cli
