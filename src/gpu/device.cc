#include "gpu/device.h"

#include <array>
#include <utility>

namespace headroom::gpu {

std::string ThrottleReasonNames(std::uint64_t reasons) {
  static constexpr std::array<std::pair<std::uint64_t, const char*>, 7> kNames = {{
      {kThrottleGpuIdle, "idle"},
      {kThrottleClockSetting, "clock_setting"},
      {kThrottleSwPowerCap, "power_cap"},
      {kThrottleHwSlowdown, "hw_slowdown"},
      {kThrottleSwThermal, "sw_thermal"},
      {kThrottleHwThermal, "hw_thermal"},
      {kThrottleHwPowerBrake, "power_brake"},
  }};
  std::string out;
  for (const auto& [bit, name] : kNames) {
    if ((reasons & bit) == 0) continue;
    if (!out.empty()) out += '|';
    out += name;
  }
  return out.empty() ? "none" : out;
}

}  // namespace headroom::gpu
