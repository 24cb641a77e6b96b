#include "mig/workload_summary.h"

#include "core/check.h"

namespace headroom::mig {

WorkloadsOnGpu SummarizeWorkloads(const SliceModel& model,
                                  std::span<const MeasuredWorkload> workloads,
                                  std::span<const WorkloadFit> fits) {
  HEADROOM_CHECK(workloads.size() == fits.size());
  HEADROOM_CHECK(!model.mig().profiles.empty());
  const GiProfile& smallest = model.mig().profiles.front();
  const Slice whole = WholeGpuSlice(model.gpu(), model.mig());
  const Slice small = InstanceSlice(smallest, smallest.starts.front());
  const core::Megahertz f = model.gpu().sm_clock_max;
  WorkloadsOnGpu out{.gpu = model.mig().name, .smallest_instance = smallest.name};
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    const WorkloadFit& fit = fits[i];
    const int b = workloads[i].default_batch;
    WorkloadSummary row{.workload = workloads[i].name,
                        .batch = b,
                        .fit = fit,
                        .footprint_gib = model.FootprintGib(fit, b),
                        .whole_gpu_samples_per_s = b / model.IterationSeconds(fit, b, whole, f)};
    if (model.Fits(fit, b, small)) {
      row.smallest_instance_samples_per_s = b / model.IterationSeconds(fit, b, small, f);
    }
    out.workloads.push_back(std::move(row));
  }
  return out;
}

}  // namespace headroom::mig
