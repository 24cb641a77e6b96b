#include "report/mig_workloads_report.h"

#include <fmt/format.h>

#include "format/table.h"

namespace headroom::report {

std::string MigWorkloadsText(const mig::WorkloadsOnGpu& summary, const std::string& reference_gpu,
                             const format::TextStyle& style) {
  using Align = format::TextTable::Align;
  format::TextTable table({{"WORKLOAD", Align::kLeft},
                           {"BATCH"},
                           {"HOST_MS"},
                           {"OPT_MS"},
                           {"PER_SAMPLE_MS"},
                           {"COMPUTE_SHARE"},
                           {"MEMORY_GIB"},
                           {"J/SAMPLE"},
                           {"FIXED_J"},
                           {"FIT_ERR_W"},
                           {"WHOLE_SAMPLES/S"},
                           {fmt::format("{}_SAMPLES/S", summary.smallest_instance)}});
  for (const mig::WorkloadSummary& w : summary.workloads) {
    const mig::WorkloadFit& fit = w.fit;
    table.AddRow(
        {w.workload, std::to_string(w.batch), fmt::format("{:.2f}", fit.host_s * 1e3),
         fmt::format("{:.2f}", fit.optimizer_s * 1e3),
         fmt::format("{:.4f}", fit.per_sample_s * 1e3), fmt::format("{:.2f}", fit.compute_share),
         fmt::format("{:.1f}", w.footprint_gib), fmt::format("{:.3f}", fit.energy_per_sample_j),
         fmt::format("{:.2f}", fit.fixed_energy_j), fmt::format("{:.0f}", fit.power_fit_error_w),
         fmt::format("{:.1f}", w.whole_gpu_samples_per_s),
         w.smallest_instance_samples_per_s
             ? fmt::format("{:.1f}", *w.smallest_instance_samples_per_s)
             : std::string("OOM")});
  }
  return fmt::format(
             "Training workloads measured on {}, modeled on {} (docs/mig.md, \"The slice "
             "model\")\n",
             reference_gpu, summary.gpu) +
         table.Render(style);
}

nlohmann::ordered_json MigWorkloadsJson(const mig::WorkloadsOnGpu& summary,
                                        const std::string& reference_gpu) {
  using nlohmann::ordered_json;
  ordered_json list = ordered_json::array();
  for (const mig::WorkloadSummary& w : summary.workloads) {
    const mig::WorkloadFit& fit = w.fit;
    list.push_back(
        {{"workload", w.workload},
         {"batch", w.batch},
         {"host_s", fit.host_s},
         {"optimizer_s", fit.optimizer_s},
         {"per_sample_s", fit.per_sample_s},
         {"compute_share", fit.compute_share},
         {"footprint_gib", w.footprint_gib},
         {"energy_per_sample_j", fit.energy_per_sample_j},
         {"fixed_energy_j", fit.fixed_energy_j},
         {"power_fit_error_w", fit.power_fit_error_w},
         {"whole_gpu_samples_per_s", w.whole_gpu_samples_per_s},
         {"smallest_instance", summary.smallest_instance},
         {"smallest_instance_samples_per_s", w.smallest_instance_samples_per_s
                                                 ? ordered_json(*w.smallest_instance_samples_per_s)
                                                 : ordered_json(nullptr)}});
  }
  return {{"gpu", summary.gpu}, {"reference_gpu", reference_gpu}, {"workloads", list}};
}

}  // namespace headroom::report
