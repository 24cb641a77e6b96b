// `headroom gpus`: list GPUs with their limits and clocks.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "console/terminal.h"
#include "gpu/listing.h"
#include "report/device_report.h"
#include "telemetry/prometheus_text.h"

namespace headroom::cli {
namespace {

struct GpusOptions {
  BackendOptions backend;
  bool json = false;
  bool prometheus = false;
};

int RunGpus(const GlobalOptions& global, const GpusOptions& options) {
  core::SystemClock clock;
  auto set = app::OpenDevices(global.catalog_dir, options.backend, &clock);
  if (!set) return ReportError(set.error());
  std::vector<gpu::GpuListing> listings;
  for (auto& device : set->devices) {
    auto listing = gpu::ReadListing(*device, clock.Now());
    if (!listing) return ReportError(listing.error());
    listings.push_back(std::move(*listing));
  }
  if (options.prometheus) {
    std::cout << telemetry::GpuMetricsText(listings);
  } else if (options.json) {
    nlohmann::ordered_json out;
    out["backend"] = set->backend;
    out["gpus"] = nlohmann::ordered_json::array();
    for (const auto& l : listings) out["gpus"].push_back(report::GpuListingJson(l));
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << report::GpuListingTable(listings, StdoutStyle());
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
