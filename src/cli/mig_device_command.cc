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
#include "cli/terminal.h"
#include "gpu/mig_apply.h"
#include "mig/apply_plan.h"
#include "mig/layout.h"
#include "report/table.h"

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

std::string ModeText(const gpu::MigModeState& mode) {
  if (mode.current == mode.pending) return mode.current ? "enabled" : "disabled";
  return mode.current ? "enabled (disabled after the next GPU reset)"
                      : "disabled (enabled after the next GPU reset)";
}

// One GPU's MIG state as `show` reports it.
struct GpuMigView {
  const gpu::Device* device = nullptr;
  std::string type = {};
  std::optional<gpu::MigModeState> mode = {};  // absent: no MIG on this GPU or backend
  std::string no_mig_reason = {};
  std::vector<gpu::MigGpuInstance> instances = {};
  std::vector<std::string> profile_names = {};  // per instance
  std::string layout = {};
};

core::Result<GpuMigView> ReadView(const GlobalOptions& global, gpu::Device& device) {
  GpuMigView view{.device = &device, .type = device.info().catalog_type.value_or("unknown")};
  auto mode = device.MigMode();
  if (!mode) {
    if (mode.error().code() != core::Code::kUnimplemented) return core::Fail(mode.error());
    view.no_mig_reason = mode.error().message();
    return view;
  }
  view.mode = *mode;
  if (!mode->current) return view;
  HEADROOM_ASSIGN_OR_RETURN(mig::GpuMigSpec spec, MigSpecOfDevice(global, device));
  HEADROOM_ASSIGN_OR_RETURN(view.instances, device.MigInstances());
  HEADROOM_ASSIGN_OR_RETURN(std::vector<mig::GpuInstanceState> state,
                            gpu::ToMigState(spec, view.instances));
  for (const mig::GpuInstanceState& gi : state) view.profile_names.push_back(gi.profile);
  view.layout = mig::FormatLayout(mig::ToLayout(spec, state));
  return view;
}

std::string ShowText(const GpuMigView& view) {
  const gpu::DeviceInfo& info = view.device->info();
  std::string out = fmt::format("GPU {} ({}, {}): ", info.index, info.name, view.type);
  if (!view.mode) return out + fmt::format("no MIG ({})\n", view.no_mig_reason);
  out += fmt::format("MIG {}\n", ModeText(*view.mode));
  if (!view.mode->current) return out;
  out += fmt::format("layout: {}\n", view.layout.empty() ? "(no instances)" : view.layout);
  if (view.instances.empty()) return out;
  using Align = report::TextTable::Align;
  report::TextTable table({{"GI"},
                           {"PROFILE", Align::kLeft},
                           {"SLICES"},
                           {"SMS"},
                           {"MEMORY_GIB"},
                           {"CI"},
                           {"CI_SLICES"},
                           {"CI_SMS"},
                           {"MIG_UUID", Align::kLeft}});
  for (size_t i = 0; i < view.instances.size(); ++i) {
    const gpu::MigGpuInstance& gi = view.instances[i];
    std::vector<std::string> head = {
        std::to_string(gi.id), view.profile_names[i],
        gi.size == 1 ? std::to_string(gi.start)
                     : fmt::format("{}-{}", gi.start, gi.start + gi.size - 1),
        std::to_string(gi.sm_count), fmt::format("{:.2f}", gi.memory_bytes / core::kBytesPerGib)};
    if (gi.compute_instances.empty()) {
      head.insert(head.end(), {"-", "-", "-", "(no compute instance)"});
      table.AddRow(head);
    }
    for (const gpu::MigComputeInstance& ci : gi.compute_instances) {
      std::vector<std::string> row = head;
      row.insert(row.end(), {std::to_string(ci.id), fmt::format("{}c", ci.compute_slices),
                             std::to_string(ci.sm_count), ci.uuid.empty() ? "-" : ci.uuid});
      table.AddRow(row);
    }
  }
  return out + table.Render(StdoutStyle());
}

ordered_json ShowJson(const GpuMigView& view) {
  const gpu::DeviceInfo& info = view.device->info();
  ordered_json gpu = {
      {"index", info.index}, {"name", info.name}, {"uuid", info.uuid}, {"type", view.type}};
  if (!view.mode) {
    gpu["mig"] = nullptr;
    gpu["reason"] = view.no_mig_reason;
    return gpu;
  }
  gpu["mig"] = {{"current", view.mode->current}, {"pending", view.mode->pending}};
  gpu["layout"] = view.layout;
  gpu["instances"] = ordered_json::array();
  for (size_t i = 0; i < view.instances.size(); ++i) {
    const gpu::MigGpuInstance& gi = view.instances[i];
    ordered_json cis = ordered_json::array();
    for (const gpu::MigComputeInstance& ci : gi.compute_instances) {
      cis.push_back({{"id", ci.id},
                     {"compute_slices", ci.compute_slices},
                     {"sm_count", ci.sm_count},
                     {"uuid", ci.uuid}});
    }
    gpu["instances"].push_back({{"id", gi.id},
                                {"profile", view.profile_names[i]},
                                {"profile_id", gi.profile_id},
                                {"start", gi.start},
                                {"size", gi.size},
                                {"sm_count", gi.sm_count},
                                {"memory_bytes", gi.memory_bytes},
                                {"compute_instances", cis}});
  }
  return gpu;
}

int RunShow(const GlobalOptions& global, const MigDeviceOptions& o) {
  core::SystemClock clock;
  auto set = OpenDevices(global, o.backend, &clock);
  if (!set) return ReportError(set.error());
  ordered_json json = {{"backend", set->backend}, {"gpus", ordered_json::array()}};
  for (const auto& device : set->devices) {
    auto view = ReadView(global, *device);
    if (!view) return ReportError(view.error());
    if (o.json) {
      json["gpus"].push_back(ShowJson(*view));
    } else {
      std::cout << ShowText(*view);
    }
  }
  if (o.json) std::cout << json.dump(2) << "\n";
  return kExitOk;
}

std::string StepsText(const std::vector<mig::ApplyStep>& steps) {
  std::string out;
  for (size_t i = 0; i < steps.size(); ++i) {
    out += fmt::format("  {:>2}. {}\n", i + 1, mig::DescribeStep(steps[i]));
  }
  return out;
}

ordered_json StepsJson(const std::vector<mig::ApplyStep>& steps) {
  ordered_json out = ordered_json::array();
  for (const mig::ApplyStep& step : steps) out.push_back(mig::DescribeStep(step));
  return out;
}

// Prints what happened; the error, if any, on stderr. Returns the exit code.
int ReportApply(const gpu::Device& device, const std::string& target, const gpu::MigApplyReport& r,
                const MigDeviceOptions& o, ordered_json* json) {
  const int index = device.info().index;
  const bool rolled_back = r.error.has_value() && !r.rollback_error.has_value();
  if (o.json) {
    json->push_back({{"index", index},
                     {"type", device.info().catalog_type.value_or("unknown")},
                     {"before", r.before},
                     {"target", target},
                     {"dry_run", o.dry_run},
                     {"plan", StepsJson(r.plan.steps)},
                     {"done", r.done.size()},
                     {"ok", r.ok()},
                     {"error", r.error ? ordered_json(r.error->message()) : ordered_json()},
                     {"rolled_back", rolled_back},
                     {"rollback", StepsJson(r.rollback)},
                     {"rollback_error", r.rollback_error ? ordered_json(r.rollback_error->message())
                                                         : ordered_json()},
                     {"after", r.after}});
  } else {
    std::cout << fmt::format("GPU {}: {} -> {}\n", index, r.before.empty() ? "(none)" : r.before,
                             target);
    if (r.plan.empty()) {
      std::cout << "already in place; nothing to do\n";
    } else {
      std::cout << fmt::format("plan ({} steps):\n", r.plan.steps.size())
                << StepsText(r.plan.steps);
      if (o.dry_run) {
        std::cout << "dry run: nothing changed\n";
      } else if (r.ok()) {
        std::cout << fmt::format("applied: {}\n", r.after);
      }
    }
  }
  if (r.ok()) return kExitOk;
  // The backend's message names the GPU already.
  std::string message = r.error->message();
  if (rolled_back) {
    message += fmt::format("; rolled back to {} ({} undo steps)",
                           r.after.empty() ? "no instances" : r.after, r.rollback.size());
  } else {
    message += fmt::format("; ROLLBACK FAILED: {}; the GPU is left at: {}",
                           r.rollback_error->message(), r.after.empty() ? "(none)" : r.after);
  }
  PrintError(message);
  return kExitRuntime;
}

int RunApply(const GlobalOptions& global, const MigDeviceOptions& o) {
  auto layout = mig::ParseLayout(o.layout);
  if (!layout) return ReportError(layout.error());
  core::SystemClock clock;
  auto set = OpenDevices(global, o.backend, &clock);
  if (!set) return ReportError(set.error());
  ordered_json json = ordered_json::array();
  int exit_code = kExitOk;
  for (const auto& device : set->devices) {
    auto spec = MigSpecOfDevice(global, *device);
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
  auto o = std::make_shared<MigDeviceOptions>();
  CLI::App* show = mig->add_subcommand(
      "show", "Show each GPU's MIG mode and instances (layout, SMs, memory, MIG device UUIDs)");
  AddBackendOptions(show, &o->backend);
  show->add_flag("--json", o->json,
                 "Print {\"backend\", \"gpus\": [...]} as JSON (with --profiles: {\"gpu\", "
                 "\"catalog\", \"profiles\", \"match\"} per GPU)");
  show->add_flag("--profiles", o->profiles,
                 "Compare the driver's GPU-instance profiles and placements with the MIG catalog "
                 "(read-only; works with MIG mode off); exit 1 when they differ");
  show->callback([run, o, &global] {
    *run = [o, &global] {
      return o->profiles ? RunMigProfileCheck(global, o->backend, o->json) : RunShow(global, *o);
    };
  });
}

void AddMigApply(CLI::App* mig, const GlobalOptions& global, RunFunction* run) {
  auto o = std::make_shared<MigDeviceOptions>();
  CLI::App* apply = mig->add_subcommand(
      "apply",
      "Partition GPUs into a layout, e.g. 3g.40gb@0,2g.20gb@4,1g.10gb@6 (rolls back on failure)");
  apply->add_option("layout", o->layout, "GPU instances as <profile>@<start slot>[/<n>c+...]")
      ->required();
  AddBackendOptions(apply, &o->backend);
  apply->add_flag("--dry-run", o->dry_run, "Print the ordered plan; change nothing");
  apply->add_flag("--force", o->force, "Go ahead while compute processes run on the GPU");
  apply->add_flag("--json", o->json, "Print the plan and outcome per GPU as JSON");
  apply->callback([run, o, &global] { *run = [o, &global] { return RunApply(global, *o); }; });
}

}  // namespace headroom::cli
