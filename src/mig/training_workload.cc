#include "mig/training_workload.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace headroom::mig {
namespace {

// Bytes moved per byte of activation memory kept for the backward pass: written in the forward
// pass, read in the backward pass, and its gradient written once (an estimate; no counters here).
constexpr double kTrafficPerActivationByte = 3.0;

}  // namespace

double OptimizerBytesPerParameter(Optimizer optimizer) {
  return optimizer == Optimizer::kAdamW ? 28.0 : 20.0;
}

core::Result<WorkloadFit> FitWorkload(const MeasuredWorkload& w, const model::GpuSpec& reference,
                                      double reference_idle_w) {
  auto fail = [&](const std::string& why) {
    return core::Fail(core::Error::InvalidArgument(fmt::format("workload {}: {}", w.name, why)));
  };
  if (w.measured.size() < 2) return fail("needs measurements at two or more batch sizes");
  const MeasuredPoint& small = w.measured.front();
  const MeasuredPoint& large = w.measured.back();
  if (large.batch <= small.batch) return fail("measurements must be in ascending batch order");
  const double t_small = small.batch / small.samples_per_s;
  const double t_large = large.batch / large.samples_per_s;
  WorkloadFit fit;
  // Iteration time = fixed + batch x per-sample: a straight line through the two points.
  fit.per_sample_s = (t_large - t_small) / (large.batch - small.batch);
  if (fit.per_sample_s <= 0) return fail("iteration time does not grow with the batch");
  double fixed_s = t_small - small.batch * fit.per_sample_s;
  if (fixed_s < 0) {  // super-linear scaling: take the line through the origin and the large point
    fixed_s = 0;
    fit.per_sample_s = t_large / large.batch;
  }
  const double bandwidth = reference.memory_bandwidth_bytes_per_s * kStreamingBandwidthEfficiency;
  const double optimizer_bytes =
      w.head_only ? 0.0 : w.parameters * OptimizerBytesPerParameter(w.optimizer);
  fit.optimizer_s = std::min(fixed_s, optimizer_bytes / bandwidth);
  fit.host_s = fixed_s - fit.optimizer_s;

  fit.memory_per_sample_gib =
      std::max(0.0, (large.memory_gib - small.memory_gib) / (large.batch - small.batch));
  fit.memory_fixed_gib = std::max(0.0, small.memory_gib - small.batch * fit.memory_per_sample_gib);

  // Roofline split of the per-sample time: FLOPs at the datasheet rate against the activation
  // traffic at the datasheet bandwidth.
  const double bytes_per_sample =
      fit.memory_per_sample_gib * core::kBytesPerGib * kTrafficPerActivationByte;
  const double compute_time = w.flops_per_sample / reference.bf16_flops_per_s;
  const double memory_time = bytes_per_sample / reference.memory_bandwidth_bytes_per_s;
  fit.compute_share = compute_time / (compute_time + memory_time);

  // Work energy per iteration against the batch: a line through the measured points (least
  // squares), clamped to pass through the origin when its intercept would be negative.
  const double active_w = reference.power.active_w;
  auto work_energy = [&](const MeasuredPoint& p) {
    const double t = p.batch / p.samples_per_s;
    return (p.power_w - reference_idle_w - active_w) * t;
  };
  double sb = 0, se = 0, sbb = 0, sbe = 0;
  for (const MeasuredPoint& p : w.measured) {
    sb += p.batch;
    se += work_energy(p);
    sbb += static_cast<double>(p.batch) * p.batch;
    sbe += p.batch * work_energy(p);
  }
  const double n = static_cast<double>(w.measured.size());
  double slope = (n * sbe - sb * se) / (n * sbb - sb * sb);
  double intercept = (se - slope * sb) / n;
  if (intercept < 0) {
    intercept = 0;
    slope = sbe / sbb;
  }
  fit.energy_per_sample_j = std::max(0.0, slope);
  fit.fixed_energy_j = intercept;
  for (const MeasuredPoint& p : w.measured) {
    const double t = p.batch / p.samples_per_s;
    const double modeled =
        reference_idle_w + active_w + (fit.energy_per_sample_j * p.batch + fit.fixed_energy_j) / t;
    fit.power_fit_error_w = std::max(fit.power_fit_error_w, std::abs(modeled - p.power_w));
  }
  return fit;
}

}  // namespace headroom::mig
