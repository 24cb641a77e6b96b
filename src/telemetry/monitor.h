// Monitor: what `headroom monitor` streams. Every `interval` on the clock, a snapshot of each
// device with the energy it used since the monitor started (from its energy counter), until the
// duration is up or a stop is asked for. Thread-compatible; the devices are read from the calling
// thread only.
#ifndef HEADROOM_TELEMETRY_MONITOR_H_
#define HEADROOM_TELEMETRY_MONITOR_H_

#include <atomic>
#include <functional>
#include <optional>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "core/units.h"
#include "gpu/device.h"
#include "gpu/snapshot.h"

namespace headroom::telemetry {

struct MonitorSample {
  double time_s = 0;  // since the monitor started
  int gpu = 0;        // the device's index
  gpu::DeviceSnapshot snapshot = {};
  std::optional<core::Joules> energy_since_start = {};  // nullopt without a counter
};

struct MonitorOptions {
  core::Duration interval = std::chrono::seconds(1);
  std::optional<core::Duration> duration = {};  // nullopt: until stopped
  const std::atomic<bool>* stop = nullptr;
};

// Hands `on_sample` each device's sample, in device order, at start + k * interval (k = 1, 2, ...)
// while k * interval <= duration; returns when done or stopped, or on the first failed snapshot.
// REQUIRES: interval > 0; the devices and the clock outlive the call.
[[nodiscard]] core::Status RunMonitor(const std::vector<gpu::Device*>& devices, core::Clock& clock,
                                      const MonitorOptions& options,
                                      const std::function<void(const MonitorSample&)>& on_sample);

}  // namespace headroom::telemetry

#endif  // HEADROOM_TELEMETRY_MONITOR_H_
