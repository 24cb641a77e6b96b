// DeviceSnapshot: one reading of everything a Device offers, with each read that the device
// does not support left empty (capabilities are absent, not errors). Plain value type.
#ifndef HEADROOM_GPU_SNAPSHOT_H_
#define HEADROOM_GPU_SNAPSHOT_H_

#include <optional>

#include "core/result.h"
#include "core/time.h"
#include "gpu/device.h"

namespace headroom::gpu {

struct DeviceSnapshot {
  core::TimePoint time;
  std::optional<core::Watts> power_instant;
  std::optional<core::Watts> power_average;
  std::optional<core::Joules> energy_counter;
  std::optional<core::Megahertz> sm_clock;
  std::optional<core::Megahertz> memory_clock;
  std::optional<UtilizationRates> utilization;
  std::optional<core::Celsius> temperature;
  std::optional<MemoryUsage> memory;
  std::optional<PowerLimitState> power_limits;
  std::optional<std::uint64_t> throttle_reasons;
};

// Reads every value. A kUnimplemented read leaves its field empty; any other error (GPU lost,
// driver gone) fails the whole snapshot, naming the GPU.
[[nodiscard]] core::Result<DeviceSnapshot> TakeSnapshot(Device& device, core::TimePoint time);

}  // namespace headroom::gpu

#endif  // HEADROOM_GPU_SNAPSHOT_H_
