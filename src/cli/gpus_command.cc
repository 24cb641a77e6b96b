// `headroom gpus`: list GPUs with their limits and clocks.
#include <iostream>

#include "app/gpus.h"
#include "cli/commands.h"
#include "console/terminal.h"
#include "report/device_report.h"

namespace headroom::cli {
namespace {

struct GpusOptions {
  BackendOptions backend;
  bool json = false;
  bool prometheus = false;
};

int RunGpus(const GlobalOptions& global, const GpusOptions& options) {
  auto gpus = app::ListGpus({.catalog_dir = global.catalog_dir,
                             .backend = options.backend,
                             .prometheus = options.prometheus});
  if (!gpus) return ReportError(gpus.error());
  if (options.prometheus) {
    std::cout << gpus->prometheus;
  } else if (options.json) {
    nlohmann::ordered_json out;
    out["backend"] = gpus->backend;
    out["gpus"] = nlohmann::ordered_json::array();
    for (const auto& l : gpus->listings) out["gpus"].push_back(report::GpuListingJson(l));
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << report::GpuListingTable(gpus->listings, StdoutStyle());
  }
  return kExitOk;
}

}  // namespace

void RegisterGpus(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  CLI::App* cmd =
      app.add_subcommand("gpus", "List GPUs with their power limits, clocks and memory");
  auto* options = OptionsRunBy(cmd, run, global, RunGpus);
  AddBackendOptions(cmd, &options->backend);
  cmd->add_flag("--json", options->json, "Print JSON instead of a table");
  cmd->add_flag("--prometheus", options->prometheus,
                "Print Prometheus text exposition (e.g. for node_exporter's textfile collector)")
      ->excludes("--json");
}

}  // namespace headroom::cli
