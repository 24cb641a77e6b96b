#include "gpu/listing.h"

namespace headroom::gpu {

core::Result<GpuListing> ReadListing(Device& device, core::TimePoint now) {
  GpuListing listing;
  listing.info = device.info();
  HEADROOM_ASSIGN_OR_RETURN(listing.snapshot, TakeSnapshot(device, now));
  if (auto lock = device.SmClockLock()) listing.clock_lock = *lock;
  if (auto clocks = device.SupportedSmClocks(); clocks && !clocks->empty()) {
    listing.sm_clock_min = clocks->back();
  }
  if (auto smoothing = device.PowerSmoothing()) listing.power_smoothing = *smoothing;
  return listing;
}

}  // namespace headroom::gpu
