#include "mig/characterize.h"

#include "mig/attribution.h"
#include "mig/enumerate.h"

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

std::vector<LayoutResult> CharacterizeSweep(
    const SliceModel& model, std::span<const MeasuredWorkload> workloads,
    std::span<const WorkloadFit> fits, std::span<const std::optional<Layout>> layouts,
    const std::function<void(double fraction, const std::string& workload)>& progress) {
  std::vector<LayoutResult> results;
  const size_t total = workloads.size() * layouts.size();
  for (size_t w = 0; w < workloads.size(); ++w) {
    for (const std::optional<Layout>& layout : layouts) {
      results.push_back(
          CharacterizeLayout(model, layout, workloads[w], fits[w], workloads[w].default_batch));
      if (progress) progress(static_cast<double>(results.size()) / total, workloads[w].name);
    }
  }
  return results;
}

std::vector<EqualInstanceScaling> ScaleWithEqualInstances(
    const SliceModel& model, std::span<const MeasuredWorkload> workloads,
    std::span<const WorkloadFit> fits) {
  std::vector<EqualInstanceScaling> out;
  for (size_t w = 0; w < workloads.size(); ++w) {
    const int batch = workloads[w].default_batch;
    const LayoutResult off = CharacterizeLayout(model, std::nullopt, workloads[w], fits[w], batch);
    if (off.gpu_samples_per_s <= 0) continue;
    EqualInstanceScaling s{.workload = workloads[w].name};
    for (const auto& [count, layout] : EqualInstanceLayouts(model.mig())) {
      const LayoutResult r = CharacterizeLayout(model, layout, workloads[w], fits[w], batch);
      bool all_fit = true;
      for (const InstanceResult& in : r.per_instance) all_fit = all_fit && in.fits;
      if (!all_fit) continue;
      s.throughput.emplace_back(count, r.gpu_samples_per_s / off.gpu_samples_per_s);
      s.energy.emplace_back(count, r.gpu_j_per_sample / off.gpu_j_per_sample);
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace headroom::mig
