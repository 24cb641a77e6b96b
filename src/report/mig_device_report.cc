#include "report/mig_device_report.h"

#include <vector>

#include <fmt/format.h>

#include "core/units.h"
#include "format/table.h"
#include "mig/apply_plan.h"

namespace headroom::report {
namespace {

std::string MigModeText(const gpu::MigModeState& mode) {
  if (mode.current == mode.pending) return mode.current ? "enabled" : "disabled";
  return mode.current ? "enabled (disabled after the next GPU reset)"
                      : "disabled (enabled after the next GPU reset)";
}

format::TextTable MigInstanceTable(const gpu::GpuMigView& view) {
  using Align = format::TextTable::Align;
  format::TextTable table({{"GI"},
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
  return table;
}

std::string MigApplyStepsText(const std::vector<mig::ApplyStep>& steps) {
  std::string out;
  for (size_t i = 0; i < steps.size(); ++i) {
    out += fmt::format("  {:>2}. {}\n", i + 1, mig::DescribeStep(steps[i]));
  }
  return out;
}

nlohmann::ordered_json MigApplyStepsJson(const std::vector<mig::ApplyStep>& steps) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const mig::ApplyStep& step : steps) out.push_back(mig::DescribeStep(step));
  return out;
}

// Whether a failed apply put the original instances back.
bool MigApplyRolledBack(const gpu::MigApplyReport& r) {
  return r.error.has_value() && !r.rollback_error.has_value();
}

}  // namespace

std::string MigShowText(const gpu::GpuMigView& view, const format::TextStyle& style) {
  std::string out = fmt::format("GPU {} ({}, {}): ", view.info.index, view.info.name, view.type);
  if (!view.mode) return out + fmt::format("no MIG ({})\n", view.no_mig_reason);
  out += fmt::format("MIG {}\n", MigModeText(*view.mode));
  if (!view.mode->current) return out;
  out += fmt::format("layout: {}\n", view.layout.empty() ? "(no instances)" : view.layout);
  if (view.instances.empty()) return out;
  return out + MigInstanceTable(view).Render(style);
}

nlohmann::ordered_json MigShowJson(const gpu::GpuMigView& view) {
  using nlohmann::ordered_json;
  ordered_json gpu = {{"index", view.info.index},
                      {"name", view.info.name},
                      {"uuid", view.info.uuid},
                      {"type", view.type}};
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

std::string MigApplyText(const gpu::MigApplyReport& r, int gpu_index, const std::string& target,
                         bool dry_run) {
  std::string out =
      fmt::format("GPU {}: {} -> {}\n", gpu_index, r.before.empty() ? "(none)" : r.before, target);
  if (r.plan.empty()) return out + "already in place; nothing to do\n";
  out += fmt::format("plan ({} steps):\n", r.plan.steps.size()) + MigApplyStepsText(r.plan.steps);
  if (dry_run) {
    out += "dry run: nothing changed\n";
  } else if (r.ok()) {
    out += fmt::format("applied: {}\n", r.after);
  }
  return out;
}

nlohmann::ordered_json MigApplyJson(const gpu::MigApplyReport& r, const gpu::DeviceInfo& info,
                                    const std::string& target, bool dry_run) {
  using nlohmann::ordered_json;
  return {{"index", info.index},
          {"type", info.catalog_type.value_or("unknown")},
          {"before", r.before},
          {"target", target},
          {"dry_run", dry_run},
          {"plan", MigApplyStepsJson(r.plan.steps)},
          {"done", r.done.size()},
          {"ok", r.ok()},
          {"error", r.error ? ordered_json(r.error->message()) : ordered_json()},
          {"rolled_back", MigApplyRolledBack(r)},
          {"rollback", MigApplyStepsJson(r.rollback)},
          {"rollback_error",
           r.rollback_error ? ordered_json(r.rollback_error->message()) : ordered_json()},
          {"after", r.after}};
}

std::string MigApplyFailure(const gpu::MigApplyReport& r) {
  // The backend's message names the GPU already.
  std::string message = r.error->message();
  if (MigApplyRolledBack(r)) {
    return message + fmt::format("; rolled back to {} ({} undo steps)",
                                 r.after.empty() ? "no instances" : r.after, r.rollback.size());
  }
  return message + fmt::format("; ROLLBACK FAILED: {}; the GPU is left at: {}",
                               r.rollback_error->message(), r.after.empty() ? "(none)" : r.after);
}

}  // namespace headroom::report
