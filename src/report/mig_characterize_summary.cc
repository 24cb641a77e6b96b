#include "report/mig_characterize_summary.h"

#include <fmt/format.h>

#include "format/table.h"

namespace headroom::report {

using nlohmann::ordered_json;

namespace {

ordered_json SummaryEntry(const mig::LayoutResult* r) {
  if (r == nullptr) return ordered_json(nullptr);
  return {{"layout", r->layout},
          {"gpu_samples_per_s", r->gpu_samples_per_s},
          {"gpu_power_w", r->gpu_power_w},
          {"gpu_j_per_sample", r->gpu_j_per_sample}};
}

}  // namespace

ordered_json MigCharacterizeSummaryJson(const MigCharacterizeReport& report,
                                        const std::string& out_dir) {
  ordered_json list = ordered_json::array();
  for (const MigWorkloadBest& b : BestPerWorkload(report.results)) {
    list.push_back({{"workload", b.workload},
                    {"mig_off", SummaryEntry(b.off)},
                    {"fastest", SummaryEntry(b.fastest)},
                    {"least_energy", SummaryEntry(b.leanest)}});
  }
  return {{"gpu", report.inputs.geometry.gpu},
          {"power_limit_w", report.inputs.power_limit_w},
          {"layouts", report.inputs.layouts.size()},
          {"results_csv", fmt::format("{}/{}", out_dir, kMigResultsFile)},
          {"workloads", list}};
}

std::string MigCharacterizeSummaryText(const MigCharacterizeReport& report,
                                       const format::TextStyle& style) {
  using Align = format::TextTable::Align;
  format::TextTable table({{"WORKLOAD", Align::kLeft},
                           {"MIG_OFF_SAMPLES/S"},
                           {"MIG_OFF_J/SAMPLE"},
                           {"FASTEST_LAYOUT", Align::kLeft},
                           {"THROUGHPUT"},
                           {"LEAST_ENERGY_LAYOUT", Align::kLeft},
                           {"ENERGY/SAMPLE"}});
  for (const MigWorkloadBest& b : BestPerWorkload(report.results)) {
    if (b.off == nullptr || b.fastest == nullptr || b.off->gpu_samples_per_s <= 0) continue;
    table.AddRow({b.workload, fmt::format("{:.1f}", b.off->gpu_samples_per_s),
                  fmt::format("{:.4f}", b.off->gpu_j_per_sample), b.fastest->layout,
                  format::FormatChange(b.fastest->gpu_samples_per_s / b.off->gpu_samples_per_s - 1),
                  b.leanest->layout,
                  format::FormatChange(b.leanest->gpu_j_per_sample / b.off->gpu_j_per_sample - 1)});
  }
  const MigCharacterizeInputs& in = report.inputs;
  return fmt::format(
             "MIG characterization on {} (simulated, power limit {:.0f} W): {} layouts x {} "
             "workloads, every instance running its own copy\n",
             in.geometry.gpu, in.power_limit_w, in.layouts.size(), in.workloads.size()) +
         table.Render(style);
}

std::vector<format::Plot> MigScalingPlots(const std::string& gpu,
                                          const std::vector<mig::EqualInstanceScaling>& scaling) {
  format::Plot throughput{
      .name = "mig-throughput",
      .title = fmt::format("Whole-GPU throughput with N equal MIG instances, {}", gpu),
      .x_label = "equal instances (1 = 7g, 2 = 3g, 3 = 2g, 7 = 1g)",
      .y_label = "samples/s relative to MIG off"};
  format::Plot energy{.name = "mig-energy",
                      .title = fmt::format("Energy per sample with N equal MIG instances, {}", gpu),
                      .x_label = "equal instances (1 = 7g, 2 = 3g, 3 = 2g, 7 = 1g)",
                      .y_label = "J/sample relative to MIG off"};
  for (const mig::EqualInstanceScaling& s : scaling) {
    throughput.series.push_back({.label = s.workload, .points = s.throughput});
    energy.series.push_back({.label = s.workload, .points = s.energy});
  }
  return {throughput, energy};
}

}  // namespace headroom::report
