// `headroom mig show` and `headroom mig apply`: the MIG instances of real (or simulated) GPUs,
// read and changed through the Device interface. `show` prints each GPU's MIG mode and layout
// with its instances; `apply` validates a layout against the GPU's catalog entry, plans the
// changes (gpu/mig_apply), runs them and rolls back on failure. Not thread-safe (CLI).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "console/terminal.h"
#include "gpu/mig_apply.h"
#include "gpu/mig_view.h"
#include "mig/layout.h"
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
  core::SystemClock clock;
  auto set = app::OpenDevices(global.catalog_dir, o.backend, &clock);
  if (!set) return ReportError(set.error());
  ordered_json json = {{"backend", set->backend}, {"gpus", ordered_json::array()}};
  for (const auto& device : set->devices) {
    auto view = gpu::ReadMigView(*device, app::MigSpecLookupOf(global.catalog_dir));
    if (!view) return ReportError(view.error());
    if (o.json) {
      json["gpus"].push_back(report::MigShowJson(*view));
    } else {
      std::cout << report::MigShowText(*view, StdoutStyle());
    }
  }
  if (o.json) std::cout << json.dump(2) << "\n";
  return kExitOk;
}

// Prints what happened; the error, if any, on stderr. Returns the exit code.
int ReportApply(const gpu::Device& device, const std::string& target, const gpu::MigApplyReport& r,
                const MigDeviceOptions& o, ordered_json* json) {
  if (o.json) {
    json->push_back(report::MigApplyJson(r, device.info(), target, o.dry_run));
  } else {
    std::cout << report::MigApplyText(r, device.info().index, target, o.dry_run);
  }
  if (r.ok()) return kExitOk;
  PrintError(report::MigApplyFailure(r));
  return kExitRuntime;
}

int RunApply(const GlobalOptions& global, const MigDeviceOptions& o) {
  auto layout = mig::ParseLayout(o.layout);
  if (!layout) return ReportError(layout.error());
  core::SystemClock clock;
  auto set = app::OpenDevices(global.catalog_dir, o.backend, &clock);
  if (!set) return ReportError(set.error());
  ordered_json json = ordered_json::array();
  int exit_code = kExitOk;
  for (const auto& device : set->devices) {
    auto spec = app::MigSpecOfDevice(global.catalog_dir, *device);
    if (!spec) return ReportError(spec.error());
    if (auto valid = mig::ValidateLayout(*spec, *layout); !valid) {
      PrintError(fmt::format("GPU {}: invalid layout on {}: {}", device->info().index, spec->name,
                             valid.error().message()));
      return kExitUsage;
    }
    const gpu::MigApplyOptions options{.dry_run = o.dry_run, .force = o.force};
    auto report = gpu::ApplyMigLayout(*device, *spec, *layout, options);
    if (!report) {
      core::Error e = report.error();
      if (e.message().find("running compute processes") != std::string::npos) {
        e = core::Error(e.code(), e.message() +
                                      "; stop them first, or pass --force (the driver still "
                                      "refuses to destroy an instance in use)");
      }
      return ReportError(e);
    }
    exit_code = ReportApply(*device, mig::FormatLayout(*layout), *report, o, &json);
    if (exit_code != kExitOk) break;
  }
  if (o.json) std::cout << ordered_json{{"backend", set->backend}, {"gpus", json}}.dump(2) << "\n";
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
