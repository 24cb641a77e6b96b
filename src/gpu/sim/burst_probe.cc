#include "gpu/sim/burst_probe.h"

#include <algorithm>

#include "gpu/sim/sim_gpu.h"

namespace headroom::gpu::sim {

BurstResponse ProbeBurst(const model::GpuSpec& spec, const LoadScript& script,
                         std::optional<core::Watts> limit, std::optional<ClockLock> lock,
                         core::Duration duration) {
  SimGpu gpu(spec, script);
  if (limit) gpu.set_power_limit(*limit);
  gpu.set_clock_lock(lock);
  BurstResponse out;
  double sum_w = 0;
  long steps = 0;
  for (core::Duration t{0}; t < duration; t += SimGpu::kStep) {
    gpu.Advance(SimGpu::kStep);
    const core::Watts p = gpu.true_power();
    out.peak = std::max(out.peak, p);
    sum_w += p.value();
    ++steps;
    if (limit && p > *limit) out.above_limit += SimGpu::kStep;
  }
  if (steps > 0) out.mean = core::Watts(sum_w / static_cast<double>(steps));
  return out;
}

}  // namespace headroom::gpu::sim
