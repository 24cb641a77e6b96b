#include "report/mig_device_sweep_report.h"

#include <fmt/format.h>

#include "core/files.h"
#include "format/table.h"
#include "report/mig_characterize_report.h"

namespace headroom::report {

using nlohmann::ordered_json;

std::string MigDeviceSweepCsv(const mig::DeviceSweep& sweep, std::optional<double> samples) {
  std::string csv =
      "layout,instance,slice,uuid,sm_count,exit_code,seconds,window_s,gpu_energy_j,"
      "energy_activity_j,energy_sm_share_j,j_per_sample_activity\n";
  for (const mig::LayoutRun& run : sweep.runs) {
    for (size_t i = 0; i < run.instances.size(); ++i) {
      const mig::InstanceRun& r = run.instances[i];
      csv += fmt::format(
          "\"{}\",{},{},{},{},{},{:.3f},{:.3f},{:.1f},{:.1f},{:.1f},{}\n", r.layout, i, r.slice,
          r.uuid, r.sm_count, r.exit_code, r.seconds, run.window_s, run.energy_j,
          r.energy_activity_j, r.energy_sm_share_j,
          samples ? fmt::format("{:.6g}", r.energy_activity_j / *samples) : std::string());
    }
  }
  return csv;
}

core::Status WriteMigDeviceSweepDir(const std::string& dir, const mig::DeviceSweep& sweep,
                                    std::optional<double> samples) {
  HEADROOM_RETURN_IF_ERROR(CreateMigOutDir(dir));
  return core::WriteFileAtomically(fmt::format("{}/{}", dir, kMigResultsFile),
                                   MigDeviceSweepCsv(sweep, samples));
}

ordered_json MigDeviceSweepJson(const mig::DeviceSweep& sweep,
                                const MigDeviceSweepContext& context) {
  ordered_json runs = ordered_json::array();
  for (const mig::LayoutRun& run : sweep.runs) {
    ordered_json instances = ordered_json::array();
    for (const mig::InstanceRun& r : run.instances) {
      instances.push_back({{"slice", r.slice},
                           {"uuid", r.uuid},
                           {"sm_count", r.sm_count},
                           {"exit_code", r.exit_code},
                           {"seconds", r.seconds},
                           {"energy_activity_j", r.energy_activity_j},
                           {"energy_sm_share_j", r.energy_sm_share_j}});
    }
    runs.push_back({{"layout", run.layout},
                    {"window_s", run.window_s},
                    {"gpu_energy_j", run.energy_j},
                    {"instances", instances}});
  }
  return {{"gpu", context.gpu},
          {"backend", context.backend},
          {"idle_power_w", sweep.idle_w},
          {"original_layout", sweep.original_layout},
          {"runs", runs}};
}

std::string MigDeviceSweepText(const mig::DeviceSweep& sweep, const MigDeviceSweepContext& context,
                               const std::string& out_dir, const format::TextStyle& style) {
  using Align = format::TextTable::Align;
  format::TextTable table({{"LAYOUT", Align::kLeft},
                           {"SLICE", Align::kLeft},
                           {"EXIT"},
                           {"SECONDS"},
                           {"GPU_ENERGY_J"},
                           {"ENERGY_J (activity)"},
                           {"ENERGY_J (SM share)"},
                           {"J/SAMPLE"}});
  for (const mig::LayoutRun& run : sweep.runs) {
    for (const mig::InstanceRun& r : run.instances) {
      table.AddRow({r.layout, r.slice, std::to_string(r.exit_code),
                    fmt::format("{:.2f}", r.seconds), fmt::format("{:.0f}", run.energy_j),
                    fmt::format("{:.0f}", r.energy_activity_j),
                    fmt::format("{:.0f}", r.energy_sm_share_j),
                    context.samples ? fmt::format("{:.4g}", r.energy_activity_j / *context.samples)
                                    : std::string("-")});
    }
  }
  return fmt::format(
             "MIG characterization of GPU {} ({}): idle {:.1f} W; whole-GPU energy attributed by "
             "activity (idle by SM share, the rest by SMs x run time) and by SM share\n",
             context.gpu_index, context.gpu, sweep.idle_w) +
         table.Render(style) +
         fmt::format("Original layout '{}' restored.{}\n", sweep.original_layout,
                     out_dir.empty() ? "" : fmt::format(" Wrote {}/{}", out_dir, kMigResultsFile));
}

}  // namespace headroom::report
