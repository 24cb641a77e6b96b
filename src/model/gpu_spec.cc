#include "model/gpu_spec.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace headroom::model {

std::vector<core::Megahertz> GpuSpec::SupportedSmClocks() const {
  std::vector<core::Megahertz> clocks;
  const double step = sm_clock_step.value();
  if (step <= 0) return {sm_clock_max};
  for (double f = sm_clock_max.value(); f >= sm_clock_min.value() - 1e-9; f -= step) {
    clocks.emplace_back(f);
  }
  return clocks;
}

core::Megahertz GpuSpec::SnapClock(core::Megahertz f) const {
  const double lo = sm_clock_min.value();
  const double hi = sm_clock_max.value();
  const double clamped = std::clamp(f.value(), lo, hi);
  const double step = sm_clock_step.value();
  if (step <= 0) return core::Megahertz(clamped);
  // The grid is anchored at the maximum clock (1410, 1395, ... on A100).
  const double steps = std::round((hi - clamped) / step);
  return core::Megahertz(std::max(lo, hi - steps * step));
}

core::Result<std::vector<core::Megahertz>> GpuSpec::ClocksInRange(
    std::span<const double> mhz) const {
  std::vector<core::Megahertz> clocks;
  for (double v : mhz) {
    if (v < sm_clock_min.value() || v > sm_clock_max.value()) {
      return core::Fail(
          core::Error::OutOfRange(fmt::format("{} MHz is outside {}'s range {}-{} MHz", v, name,
                                              sm_clock_min.value(), sm_clock_max.value())));
    }
    clocks.push_back(SnapClock(core::Megahertz(v)));
  }
  return clocks;
}

core::Result<std::vector<core::Watts>> GpuSpec::PowerLimitsInRange(
    std::span<const double> watts) const {
  std::vector<core::Watts> limits;
  for (double v : watts) {
    if (v < power_limit_min.value() || v > power_limit_max.value()) {
      return core::Fail(core::Error::OutOfRange(
          fmt::format("{} W is outside {}'s settable range {}-{} W", v, name,
                      power_limit_min.value(), power_limit_max.value())));
    }
    limits.emplace_back(v);
  }
  return limits;
}

double NonGpuSlope(const ServerSpec& server, const GpuSpec& gpu) {
  const double range_w = server.gpus_per_server * (gpu.tdp - gpu.idle_power).value();
  if (range_w <= 0) return 0;
  return (server.non_gpu_power - server.non_gpu_idle_power).value() / range_w;
}

core::Watts NonGpuPower(const ServerSpec& server, const GpuSpec& gpu, core::Watts gpus) {
  const core::Watts gpus_idle = gpu.idle_power * server.gpus_per_server;
  return server.non_gpu_idle_power + (gpus - gpus_idle) * NonGpuSlope(server, gpu);
}

}  // namespace headroom::model
