#include "policy/energy_saver_clocks.h"

#include <algorithm>
#include <functional>

#include <fmt/format.h>

namespace headroom::policy {

core::Result<std::vector<core::Megahertz>> EnergySaverClocks(
    const std::vector<core::Megahertz>& supported, const model::GpuSpec& spec, double floor_share) {
  if (!(floor_share > 0 && floor_share <= 1)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("energy-saver floor: {}% is outside (0, 100]", floor_share * 100)));
  }
  std::vector<core::Megahertz> in_range;
  for (core::Megahertz f : supported) {
    if (f >= spec.sm_clock_min && f <= spec.sm_clock_max) in_range.push_back(f);
  }
  if (in_range.empty()) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("energy-saver: {} supports no SM clock within its catalog range {}-{} MHz",
                    spec.name, spec.sm_clock_min.value(), spec.sm_clock_max.value())));
  }
  std::sort(in_range.begin(), in_range.end(), std::greater<>());
  const double top = in_range.front().value();
  const double step = kEnergySaverStepShare * top;
  std::vector<core::Megahertz> out = {in_range.front()};
  for (core::Megahertz f : in_range) {
    if (f.value() < floor_share * top) break;
    // A tenth of a MHz of slack: drivers list clocks such as 1395 and 1394.5.
    if (f.value() <= out.back().value() - step + 0.1) out.push_back(f);
  }
  return out;
}

}  // namespace headroom::policy
