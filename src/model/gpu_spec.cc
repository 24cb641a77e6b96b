#include "model/gpu_spec.h"

#include <algorithm>
#include <cmath>

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

}  // namespace headroom::model
