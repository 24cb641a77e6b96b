#include "mig/characterize.h"

#include "mig/attribution.h"

namespace headroom::mig {

LayoutResult CharacterizeLayout(const SliceModel& model, const std::optional<Layout>& layout,
                                const MeasuredWorkload& workload, const WorkloadFit& fit,
                                int batch) {
  LayoutResult result;
  result.layout = layout ? FormatLayout(*layout) : "MIG off";
  result.workload = workload.name;
  result.batch = batch;
  const std::vector<Slice> slices = layout ? LayoutSlices(model.mig(), *layout)
                                           : std::vector{WholeGpuSlice(model.gpu(), model.mig())};
  result.instances = static_cast<int>(slices.size());
  std::vector<SliceJob> jobs;
  std::vector<int> job_instance;
  for (size_t i = 0; i < slices.size(); ++i) {
    InstanceResult r{.slice = slices[i].name,
                     .sm_count = slices[i].sm_count,
                     .memory_gib = slices[i].memory_gib,
                     .fits = model.Fits(fit, batch, slices[i])};
    if (r.fits) {
      jobs.push_back(SliceJob{.fit = fit, .batch = batch, .slice = slices[i]});
      job_instance.push_back(static_cast<int>(i));
    }
    result.per_instance.push_back(r);
  }
  const OperatingPoint op = model.Solve(jobs);
  result.gpu_power_w = op.power_w;
  result.clock_mhz = op.clock.value();
  result.power_limited = op.power_limited;
  // Attribution over one second of the steady state.
  std::vector<InstanceUse> uses;
  for (const Slice& s : slices) uses.push_back(InstanceUse{.sm_count = s.sm_count});
  for (size_t k = 0; k < jobs.size(); ++k) {
    uses[job_instance[k]].has_job = true;
    uses[job_instance[k]].busy_s = op.jobs[k].busy;
  }
  const EnergyShares shares = AttributeEnergy(op.power_w, model.idle_power().value(), 1.0, uses);
  for (size_t k = 0; k < jobs.size(); ++k) {
    InstanceResult& r = result.per_instance[job_instance[k]];
    r.samples_per_s = op.jobs[k].samples_per_s;
    r.busy = op.jobs[k].busy;
    r.power_activity_w = shares.activity_j[job_instance[k]];
    r.power_sm_share_w = shares.sm_share_j[job_instance[k]];
    r.j_per_sample_activity = r.power_activity_w / r.samples_per_s;
    r.j_per_sample_sm_share = r.power_sm_share_w / r.samples_per_s;
    result.gpu_samples_per_s += r.samples_per_s;
  }
  result.gpu_j_per_sample =
      result.gpu_samples_per_s > 0 ? result.gpu_power_w / result.gpu_samples_per_s : 0;
  return result;
}

}  // namespace headroom::mig
