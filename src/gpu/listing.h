// GpuListing: what `headroom gpus`, `gpus --prometheus` and the node agent show of one GPU: its
// identity, a telemetry snapshot, its SM clock lock, lowest supported clock and power smoothing.
// Plain value type; ReadListing reads one through the Device.
#ifndef HEADROOM_GPU_LISTING_H_
#define HEADROOM_GPU_LISTING_H_

#include <optional>

#include "core/result.h"
#include "core/time.h"
#include "gpu/device.h"
#include "gpu/snapshot.h"

namespace headroom::gpu {

struct GpuListing {
  DeviceInfo info;
  DeviceSnapshot snapshot;
  std::optional<ClockLock> clock_lock;
  std::optional<core::Megahertz> sm_clock_min;         // lowest supported clock
  std::optional<PowerSmoothingState> power_smoothing;  // nullopt: the GPU has none
};

// Fails when the snapshot does (naming the GPU); an unreadable lock or clock list is left out.
[[nodiscard]] core::Result<GpuListing> ReadListing(Device& device, core::TimePoint now);

}  // namespace headroom::gpu

#endif  // HEADROOM_GPU_LISTING_H_
