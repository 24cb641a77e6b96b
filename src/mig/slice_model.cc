#include "mig/slice_model.h"

#include <fmt/format.h>

namespace headroom::mig {

Slice WholeGpuSlice(const model::GpuSpec& gpu, const GpuMigSpec& mig) {
  return Slice{.name = "whole GPU",
               .sm_count = gpu.sm_count,
               .memory_slices = mig.memory_slices,
               .memory_gib = static_cast<double>(gpu.memory_bytes) / core::kBytesPerGib};
}

Slice InstanceSlice(const GiProfile& profile, int start) {
  return Slice{.name = fmt::format("{}@{}", profile.name, start),
               .sm_count = profile.sm_count,
               .memory_slices = profile.memory_slices,
               .memory_gib = profile.memory_gib};
}

std::vector<Slice> LayoutSlices(const GpuMigSpec& mig, const Layout& layout) {
  std::vector<Slice> slices;
  for (const GpuInstance& gi : layout.instances) {
    slices.push_back(InstanceSlice(*mig.FindProfile(gi.profile), gi.start));
  }
  return slices;
}

SliceModel::SliceModel(model::GpuSpec gpu, model::GpuSpec reference, GpuMigSpec mig,
                       core::Watts power_limit)
    : power_(std::move(gpu)),
      reference_(std::move(reference)),
      mig_(std::move(mig)),
      power_limit_(power_limit),
      clocks_(power_.spec().SupportedSmClocks()) {}

double SliceModel::FootprintGib(const WorkloadFit& fit, int batch) const {
  return (fit.memory_fixed_gib + batch * fit.memory_per_sample_gib) * kAllocatorSlack +
         kCudaContextGib;
}

bool SliceModel::Fits(const WorkloadFit& fit, int batch, const Slice& slice) const {
  return FootprintGib(fit, batch) <= slice.memory_gib;
}

core::Status SliceModel::CheckFits(const WorkloadFit& fit, int batch, const Slice& slice) const {
  if (Fits(fit, batch, slice)) return core::Ok();
  const double need = FootprintGib(fit, batch);
  return core::Fail(
      core::Error::OutOfRange(fmt::format("out of memory on {}: needs {:.1f} GiB, has {:.1f} GiB",
                                          slice.name, need, slice.memory_gib)));
}

double SliceModel::IterationSeconds(const WorkloadFit& fit, int batch, const Slice& slice,
                                    core::Megahertz clock) const {
  const model::GpuSpec& g = gpu();
  const double compute_scale = (reference_.bf16_flops_per_s / g.bf16_flops_per_s) *
                               (static_cast<double>(g.sm_count) / slice.sm_count) *
                               (g.sm_clock_max.value() / clock.value());
  const double bandwidth_scale =
      (reference_.memory_bandwidth_bytes_per_s / g.memory_bandwidth_bytes_per_s) *
      (static_cast<double>(mig_.memory_slices) / slice.memory_slices);
  const double per_sample = fit.per_sample_s * (fit.compute_share * compute_scale +
                                                (1 - fit.compute_share) * bandwidth_scale);
  return fit.host_s + batch * per_sample + fit.optimizer_s * bandwidth_scale;
}

double SliceModel::EnergyScale() const {
  const model::PowerModelParams& p = gpu().power;
  const model::PowerModelParams& r = reference_.power;
  return ((p.sm_w + p.memory_w) / gpu().bf16_flops_per_s) /
         ((r.sm_w + r.memory_w) / reference_.bf16_flops_per_s);
}

OperatingPoint SliceModel::Solve(std::span<const SliceJob> jobs) const {
  const model::GpuSpec& g = gpu();
  const double energy_scale = EnergyScale();
  const model::PowerModelParams& pm = g.power;
  // The chip-wide active power, paid once while any job runs, is shared by SM share.
  double sms = 0;
  for (const SliceJob& job : jobs) sms += job.slice.sm_count;
  OperatingPoint point;
  for (core::Megahertz f : clocks_) {
    point = OperatingPoint{.clock = f};
    const double dynamic_scale = power_.DynamicScale(f);
    const double active_w = jobs.empty() ? 0.0 : pm.active_w * dynamic_scale;
    point.power_w = g.idle_power.value() + active_w;
    for (const SliceJob& job : jobs) {
      const double t = IterationSeconds(job.fit, job.batch, job.slice, f);
      const double sm_share = static_cast<double>(job.slice.sm_count) / g.sm_count;
      const double work_w = (job.fit.energy_per_sample_j * job.batch + job.fit.fixed_energy_j) *
                            energy_scale * dynamic_scale / t;
      // No job draws more than its SMs' share of the model's saturated SM and memory power.
      const double cap_w = sm_share * (pm.sm_w * dynamic_scale + pm.memory_w);
      const double job_w = std::min(work_w, cap_w);
      point.jobs.push_back(
          InstanceRate{.samples_per_s = job.batch / t,
                       .busy = (t - job.fit.host_s) / t,
                       .dynamic_power_w = job_w + active_w * job.slice.sm_count / sms});
      point.power_w += job_w;
    }
    point.power_limited = f < clocks_.front();
    if (point.power_w <= power_limit_.value()) break;
  }
  return point;
}

}  // namespace headroom::mig
