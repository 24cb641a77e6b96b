#include "gpu/snapshot.h"

#include <fmt/format.h>

namespace headroom::gpu {
namespace {

// Stores a successful read; swallows "not supported"; passes any other error on.
template <class T, class U>
core::Status Keep(core::Result<T> read, std::optional<U>& field) {
  if (read) {
    field = std::move(*read);
    return core::Ok();
  }
  if (read.error().code() == core::Code::kUnimplemented) return core::Ok();
  return core::Fail(read.error());
}

}  // namespace

core::Result<DeviceSnapshot> TakeSnapshot(Device& device, core::TimePoint time) {
  DeviceSnapshot s;
  s.time = time;
  auto status = [&]() -> core::Status {
    HEADROOM_RETURN_IF_ERROR(Keep(device.PowerInstant(), s.power_instant));
    HEADROOM_RETURN_IF_ERROR(Keep(device.PowerAverage(), s.power_average));
    HEADROOM_RETURN_IF_ERROR(Keep(device.EnergyCounter(), s.energy_counter));
    HEADROOM_RETURN_IF_ERROR(Keep(device.SmClock(), s.sm_clock));
    HEADROOM_RETURN_IF_ERROR(Keep(device.MemoryClock(), s.memory_clock));
    HEADROOM_RETURN_IF_ERROR(Keep(device.Utilization(), s.utilization));
    HEADROOM_RETURN_IF_ERROR(Keep(device.Temperature(), s.temperature));
    HEADROOM_RETURN_IF_ERROR(Keep(device.Memory(), s.memory));
    HEADROOM_RETURN_IF_ERROR(Keep(device.PowerLimits(), s.power_limits));
    HEADROOM_RETURN_IF_ERROR(Keep(device.ThrottleReasons(), s.throttle_reasons));
    return core::Ok();
  }();
  if (!status) {
    return core::Fail(status.error().WithContext(fmt::format("GPU {}", device.info().index)));
  }
  return s;
}

}  // namespace headroom::gpu
