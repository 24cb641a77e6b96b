// `headroom mig show` and `headroom mig apply`: the MIG instances of real (or simulated) GPUs,
// read and changed through the Device interface. `show` prints each GPU's MIG mode and layout
// with its instances; `apply` validates a layout against the GPU's catalog entry, plans the
// changes, runs them and rolls back on failure (app/mig_device.h). Not thread-safe (CLI).
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/mig_device.h"
#include "cli/commands.h"
#include "console/terminal.h"
#include "report/mig_device_report.h"

namespace headroom::cli {
namespace {

using nlohmann::ordered_json;

struct MigDeviceOptions {
  BackendOptions backend;
  std::string layout;
  bool json = false;
  bool dry_run = false;
  bool force = false;
  bool profiles = false;  // show: the driver's profile table against the catalog
};

int RunShow(const GlobalOptions& global, const MigDeviceOptions& o) {
  if (o.profiles) return RunMigProfileCheck(global, o.backend, o.json);
  auto shown = app::MigShow({.catalog_dir = global.catalog_dir,
                             .backend = o.backend,
                             .on_gpu = [&o](const gpu::GpuMigView& view) {
                               if (!o.json) std::cout << report::MigShowText(view, StdoutStyle());
                             }});
  if (!shown) return ReportError(shown.error());
  if (o.json) {
    ordered_json json = {{"backend", shown->backend}, {"gpus", ordered_json::array()}};
    for (const auto& view : shown->gpus) json["gpus"].push_back(report::MigShowJson(view));
    std::cout << json.dump(2) << "\n";
  }
  return kExitOk;
}

int RunApply(const GlobalOptions& global, const MigDeviceOptions& o) {
  auto applied = app::MigApply({.catalog_dir = global.catalog_dir,
                                .backend = o.backend,
                                .layout = o.layout,
                                .dry_run = o.dry_run,
                                .force = o.force,
                                .on_gpu = [&o](const app::MigApplied& gpu) {
                                  if (o.json) return;
                                  std::cout << report::MigApplyText(gpu.report, gpu.info.index,
                                                                    gpu.target, o.dry_run);
                                }});
  if (!applied) return ReportError(applied.error());
  int exit_code = kExitOk;
  if (!applied->gpus.empty() && !applied->gpus.back().report.ok()) {
    PrintError(report::MigApplyFailure(applied->gpus.back().report));
    exit_code = kExitRuntime;
  }
  if (o.json) {
    ordered_json json = ordered_json::array();
    for (const auto& gpu : applied->gpus) {
      json.push_back(report::MigApplyJson(gpu.report, gpu.info, gpu.target, o.dry_run));
    }
    std::cout << ordered_json{{"backend", applied->backend}, {"gpus", json}}.dump(2) << "\n";
  }
  return exit_code;
}

}  // namespace

void AddMigShow(CLI::App* mig, const GlobalOptions& global, RunFunction* run) {
  CLI::App* show = mig->add_subcommand(
      "show", "Show each GPU's MIG mode and instances (layout, SMs, memory, MIG device UUIDs)");
  auto* o = OptionsRunBy(show, run, global, RunShow);
  AddBackendOptions(show, &o->backend);
  show->add_flag("--json", o->json,
                 "Print {\"backend\", \"gpus\": [...]} as JSON (with --profiles: {\"gpu\", "
                 "\"catalog\", \"profiles\", \"match\"} per GPU)");
  show->add_flag("--profiles", o->profiles,
                 "Compare the driver's GPU-instance profiles and placements with the MIG catalog "
                 "(read-only; works with MIG mode off); exit 1 when they differ");
}

void AddMigApply(CLI::App* mig, const GlobalOptions& global, RunFunction* run) {
  CLI::App* apply = mig->add_subcommand(
      "apply",
      "Partition GPUs into a layout, e.g. 3g.40gb@0,2g.20gb@4,1g.10gb@6 (rolls back on failure)");
  auto* o = OptionsRunBy(apply, run, global, RunApply);
  apply->add_option("layout", o->layout, "GPU instances as <profile>@<start slot>[/<n>c+...]")
      ->required();
  AddBackendOptions(apply, &o->backend);
  apply->add_flag("--dry-run", o->dry_run, "Print the ordered plan; change nothing");
  apply->add_flag("--force", o->force, "Go ahead while compute processes run on the GPU");
  apply->add_flag("--json", o->json, "Print the plan and outcome per GPU as JSON");
}

}  // namespace headroom::cli
