// `headroom mig characterize`: every MIG layout x training workload on the slice model (every
// instance runs its own copy of the workload), written as a CSV with per-instance and whole-GPU
// throughput, power and energy per sample, plots, and a summary table (docs/mig.md).
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "app/mig_device_sweep.h"
#include "app/mig_model_sweep.h"
#include "cli/commands.h"
#include "console/progress.h"
#include "console/terminal.h"
#include "mig/enumerate.h"
#include "report/mig_characterize_summary.h"
#include "report/mig_device_sweep_report.h"
#include "report/result_dir.h"

namespace headroom::cli {
namespace {

// With a command after --: what the sweep on a real GPU takes besides the layouts and --out.
struct MigDeviceSweepOptions {
  BackendOptions backend;
  std::vector<std::string> command;
  std::optional<double> samples;  // work each copy does, for J/sample
  double idle_s = 3;              // idle window measured before the sweep
  bool enable_mig = false;        // turn MIG mode on for the sweep (and off after) if it is off
};

struct MigCharacterizeOptions {
  std::string gpu = "h200";
  std::string workloads = "all";
  std::string profiles = "1g,2g,3g,4g,7g";
  std::vector<std::string> layouts;  // empty: one per multiset of maximal layouts, plus MIG off
                                     // (with a command: 7g, 2 x 3g, 3 x 2g, 7 x 1g)
  std::optional<double> power_limit_w;
  std::string out = "mig-characterize";
  bool json = false;
  bool report = false;  // also report.html in --out
  // A command after "--": measure it on the selected GPU instead of the model.
  MigDeviceSweepOptions device;
};

// `mig characterize -- COMMAND`: the command on every instance of each layout of one GPU.
int RunOnDevice(const GlobalOptions& global, const MigCharacterizeOptions& o) {
  if (o.report) {
    return ReportError(core::Error::InvalidArgument(
        "--report: only for the sweep on the model (no command after --) for now"));
  }
  const MigDeviceSweepOptions& d = o.device;
  core::SystemClock clock;
  auto set = app::OpenDevices(global.catalog_dir, d.backend, &clock);
  if (!set) return ReportError(set.error());
  if (set->devices.size() != 1) {
    return ReportError(core::Error::InvalidArgument(
        fmt::format("--gpus: characterize one GPU at a time ({} selected)", set->devices.size())));
  }
  gpu::Device& device = *set->devices.front();
  auto spec = app::MigSpecOfDevice(global.catalog_dir, device);
  if (!spec) return ReportError(spec.error());
  InstallStopHandlers();
  auto sweep =
      app::RunMigDeviceSweep(device, *spec, clock,
                             {.layouts = o.layouts,
                              .command = d.command,
                              .idle_s = d.idle_s,
                              .enable_mig = d.enable_mig,
                              .stop = &StopRequested(),
                              .on_layout =
                                  [](const std::string& layout) {
                                    PrintNote(fmt::format("mig characterize: {} ...", layout));
                                  },
                              .on_error = [](const std::string& message) { PrintError(message); }});
  if (!sweep) return ReportError(sweep.error());
  if (!o.out.empty()) {
    if (auto st = report::WriteMigDeviceSweepDir(o.out, *sweep, d.samples); !st) {
      return ReportError(st.error());
    }
  }
  const report::MigDeviceSweepContext context{.gpu_index = device.info().index,
                                              .gpu = spec->name,
                                              .backend = set->backend,
                                              .samples = d.samples};
  if (o.json) {
    std::cout << report::MigDeviceSweepJson(*sweep, context).dump(2) << "\n";
    return kExitOk;
  }
  std::cout << report::MigDeviceSweepText(*sweep, context, o.out, StdoutStyle());
  return sweep->AnyCopyFailed() ? kExitRuntime : kExitOk;
}

int RunMigCharacterize(const GlobalOptions& global, const MigCharacterizeOptions& o) {
  if (!o.device.command.empty()) return RunOnDevice(global, o);
  if (o.device.backend.backend != "sim" || !o.device.backend.gpus.empty()) {
    return ReportError(core::Error::InvalidArgument(
        "--backend/--gpus: give the command to run on each instance after --"));
  }
  auto catalogs = app::LoadMigCatalogs(global.catalog_dir);
  if (!catalogs) return ReportError(catalogs.error());
  auto model = app::MigModelOf(*catalogs, o.gpu, o.power_limit_w);
  if (!model) return ReportError(model.error());
  auto workloads = catalogs->workloads.Select(o.workloads);
  if (!workloads) return ReportError(workloads.error().WithContext("--workloads"));
  auto layouts = mig::SweepLayouts(model->mig(), o.layouts, o.profiles);
  if (!layouts) {
    return ReportError(layouts.error().WithContext(o.layouts.empty() ? "--profiles" : "--layout"));
  }
  auto fits = catalogs->Fits(*workloads);
  if (!fits) return ReportError(fits.error());
  ProgressBar progress("mig characterize", ProgressWanted());
  auto sweep = app::RunMigModelSweep(
      {.model = &*model,
       .workloads = std::move(*workloads),
       .fits = std::move(*fits),
       .layouts = std::move(*layouts),
       .out_dir = o.out,
       .version = HEADROOM_VERSION,
       .progress = [&](double f, const std::string& w) { progress.Update(f, w); },
       .on_warning = [](const std::string& message) { PrintWarning(message); }});
  progress.Finish();
  if (!sweep) return ReportError(sweep.error());
  std::optional<std::string> report_path;
  if (o.report) {
    auto written = WriteReport(report::ResultKind::kMigCharacterize, o.out);
    if (!written) return ReportError(written.error());
    report_path = *written;
  }
  return PrintResult(
      {.json = o.json,
       .json_text = report::MigCharacterizeSummaryJson(sweep->report, o.out).dump(2),
       .text = report::MigCharacterizeSummaryText(sweep->report, StdoutStyle()),
       .wrote =
           fmt::format("Wrote {}/{}{}\n", o.out, report::kMigResultsFile,
                       sweep->plotted ? " and the plots (mig-throughput.svg, mig-energy.svg)" : ""),
       .report = report_path});
}

}  // namespace

void AddMigCharacterize(CLI::App* mig, const GlobalOptions& global, RunFunction* run) {
  CLI::App* cmd = mig->add_subcommand(
      "characterize", "Throughput, power and energy per sample of MIG layouts x workloads");
  auto* o = OptionsRunBy(cmd, run, global, RunMigCharacterize);
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
  cmd->add_flag("--json", o->json, "Print the summary as JSON");
  cmd->add_flag("--report", o->report,
                "Also write report.html (self-contained HTML: layouts drawn as slots, plots "
                "inline) into --out and print its path (the model sweep only)");
  cmd->add_option("--backend", o->device.backend.backend,
                  "With a command: nvml (a real GPU in MIG mode) or sim")
      ->check(CLI::IsMember({"sim", "nvml"}));
  cmd->add_option("--gpus", o->device.backend.gpus, "With a command: the GPU to use (one)");
  cmd->add_option("--samples", o->device.samples,
                  "With a command: samples each copy processes, for J/sample")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--idle", o->device.idle_s,
                  "With a command: seconds of idle measured first (idle power for attribution)")
      ->check(CLI::Range(0.1, 600.0))
      ->capture_default_str();
  cmd->add_flag("--enable-mig", o->device.enable_mig,
                "With a command: turn MIG mode on for the sweep if it is off, and off after "
                "(refused when the GPU would need a reset)");
  cmd->add_option("command", o->device.command,
                  "Run this on every MIG instance of each layout (after --), measured on a real "
                  "GPU; without it, the slice model is swept")
      ->expected(1, -1);
}

}  // namespace headroom::cli
