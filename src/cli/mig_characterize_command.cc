// `headroom mig characterize`: every MIG layout x training workload on the slice model (every
// instance runs its own copy of the workload), written as a CSV with per-instance and whole-GPU
// throughput, power and energy per sample, plots, and a summary table (docs/mig.md).
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/mig_characterize.h"
#include "cli/commands.h"
#include "console/progress.h"
#include "console/terminal.h"
#include "report/mig_characterize_summary.h"
#include "report/mig_device_sweep_report.h"

namespace headroom::cli {
namespace {

struct MigCharacterizeOptions {
  app::MigCharacterizeRequest request;
  bool json = false;
};

int PrintDeviceSweep(const app::MigCharacterizeResult& result, const std::string& out, bool json) {
  if (json) {
    std::cout << report::MigDeviceSweepJson(*result.device, result.context).dump(2) << "\n";
    return kExitOk;
  }
  std::cout << report::MigDeviceSweepText(*result.device, result.context, out, StdoutStyle());
  return result.device->AnyCopyFailed() ? kExitRuntime : kExitOk;
}

int RunMigCharacterize(const GlobalOptions& global, const MigCharacterizeOptions& o) {
  app::MigCharacterizeRequest request = o.request;
  request.catalog_dir = global.catalog_dir;
  request.version = HEADROOM_VERSION;
  request.stop = &StopRequested();
  request.on_layout = [](const std::string& layout) {
    PrintNote(fmt::format("mig characterize: {} ...", layout));
  };
  request.on_error = PrintError;
  request.on_warning = PrintWarning;
  InstallStopHandlers();
  ProgressBar progress("mig characterize", ProgressWanted() && request.command.empty());
  request.progress = [&](double f, const std::string& w) { progress.Update(f, w); };
  auto result = app::MigCharacterize(request);
  progress.Finish();
  if (!result) return ReportError(result.error());
  const std::string& out = request.out;
  if (result->device) return PrintDeviceSweep(*result, out, o.json);
  const app::MigModelSweep& sweep = *result->model;
  return PrintResult(
      {.json = o.json,
       .json_text = report::MigCharacterizeSummaryJson(sweep.report, out).dump(2),
       .text = report::MigCharacterizeSummaryText(sweep.report, StdoutStyle()),
       .wrote =
           fmt::format("Wrote {}/{}{}\n", out, report::kMigResultsFile,
                       sweep.plotted ? " and the plots (mig-throughput.svg, mig-energy.svg)" : ""),
       .report = result->report});
}

}  // namespace

void AddMigCharacterize(CLI::App* mig, const GlobalOptions& global, RunFunction* run) {
  CLI::App* cmd = mig->add_subcommand(
      "characterize", "Throughput, power and energy per sample of MIG layouts x workloads");
  auto* options = OptionsRunBy(cmd, run, global, RunMigCharacterize);
  app::MigCharacterizeRequest* o = &options->request;
  cmd->add_option("--gpu", o->gpu, "GPU type")->capture_default_str();
  cmd->add_option("--workloads", o->workloads, "Workloads, comma-separated, or all")
      ->capture_default_str();
  cmd->add_option("--profiles", o->profiles,
                  "Profile classes whose maximal layouts are swept (one per multiset)")
      ->capture_default_str();
  cmd->add_option("--layout", o->layouts, "Sweep these layouts instead (repeatable)");
  cmd->add_option("--power-limit", o->power_limit_w, "Power limit in W (default: the GPU's)");
  cmd->add_option("--out", o->out,
                  "Directory for results.csv, mig-characterize.json (the inputs) and the plots")
      ->capture_default_str();
  cmd->add_flag("--json", options->json, "Print the summary as JSON");
  cmd->add_flag("--report", o->report,
                "Also write report.html (self-contained HTML: layouts drawn as slots, plots "
                "inline) into --out and print its path (the model sweep only)");
  cmd->add_option("--backend", o->backend.backend,
                  "With a command: nvml (a real GPU in MIG mode) or sim")
      ->check(CLI::IsMember({"sim", "nvml"}));
  cmd->add_option("--gpus", o->backend.gpus, "With a command: the GPU to use (one)");
  cmd->add_option("--samples", o->samples,
                  "With a command: samples each copy processes, for J/sample")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--idle", o->idle_s,
                  "With a command: seconds of idle measured first (idle power for attribution)")
      ->check(CLI::Range(0.1, 600.0))
      ->capture_default_str();
  cmd->add_flag("--enable-mig", o->enable_mig,
                "With a command: turn MIG mode on for the sweep if it is off, and off after "
                "(refused when the GPU would need a reset)");
  cmd->add_option("command", o->command,
                  "Run this on every MIG instance of each layout (after --), measured on a real "
                  "GPU; without it, the slice model is swept")
      ->expected(1, -1);
}

}  // namespace headroom::cli
