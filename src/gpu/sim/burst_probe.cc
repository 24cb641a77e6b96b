#include "gpu/sim/burst_probe.h"

#include <algorithm>

#include "gpu/sim/sim_gpu.h"
#include "model/gpu_power_model.h"

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

CapVersusLock CompareCapAndLock(const model::GpuSpec& spec) {
  constexpr double kCapShareOfTdp = 0.75;
  constexpr core::Duration kBurst = std::chrono::milliseconds(200);
  CapVersusLock out{.burst = kBurst, .cap = spec.tdp * kCapShareOfTdp};
  const model::GpuPowerModel model(spec);
  out.lock = model.MaxClockUnder(out.cap, model::PrefillLikePhase(), 1.0, spec.sm_clock_max);
  const auto burst = *LoadScript::Parse("prefill:200ms,idle:800ms");
  out.capped = ProbeBurst(spec, burst, out.cap, std::nullopt, kBurst);
  out.locked =
      ProbeBurst(spec, burst, std::nullopt, ClockLock{spec.sm_clock_min, out.lock}, kBurst);
  return out;
}

}  // namespace headroom::gpu::sim
