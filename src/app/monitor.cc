#include "app/monitor.h"

#include <optional>
#include <vector>

#include <fmt/format.h>

#include "core/parse.h"
#include "report/device_report.h"
#include "telemetry/monitor.h"

namespace headroom::app {
namespace {

constexpr core::Duration kMinMonitorInterval = std::chrono::milliseconds(10);
constexpr core::Duration kMaxMonitorInterval = std::chrono::seconds(60);

struct MonitorPlan {
  core::Duration interval;
  std::optional<core::Duration> duration;
  report::MonitorFormat format;
};

core::Result<MonitorPlan> PlanMonitor(const MonitorRequest& r) {
  MonitorPlan plan{};
  auto interval = core::ParseDuration(r.interval);
  if (!interval) return core::Fail(interval.error().WithContext("--interval"));
  if (*interval < kMinMonitorInterval || *interval > kMaxMonitorInterval) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--interval {} is outside 10ms..60s", r.interval)));
  }
  plan.interval = *interval;
  if (!r.duration.empty()) {
    auto duration = core::ParseDuration(r.duration);
    if (!duration) return core::Fail(duration.error().WithContext("--duration"));
    plan.duration = *duration;
  }
  HEADROOM_ASSIGN_OR_RETURN(plan.format, report::ParseMonitorFormat(r.format));
  if (r.virtual_time && r.backend.backend != "sim") {
    return core::Fail(core::Error::InvalidArgument("--virtual-time needs --backend sim"));
  }
  if (r.virtual_time && !plan.duration) {
    return core::Fail(core::Error::InvalidArgument("--virtual-time needs --duration"));
  }
  return plan;
}

}  // namespace

core::Status Monitor(const MonitorRequest& request) {
  HEADROOM_ASSIGN_OR_RETURN(const MonitorPlan plan, PlanMonitor(request));
  core::SystemClock system_clock;
  core::FakeClock virtual_clock;
  core::Clock* clock = request.virtual_time ? static_cast<core::Clock*>(&virtual_clock)
                                            : static_cast<core::Clock*>(&system_clock);
  HEADROOM_ASSIGN_OR_RETURN(const DeviceSet set,
                            OpenDevices(request.catalog_dir, request.backend, clock));
  std::vector<gpu::Device*> devices;
  for (const auto& device : set.devices) devices.push_back(device.get());
  report::MonitorWriter writer(plan.format, *request.out);
  return telemetry::RunMonitor(
      devices, *clock, {.interval = plan.interval, .duration = plan.duration, .stop = request.stop},
      [&writer](const telemetry::MonitorSample& sample) { writer.Write(sample); });
}

}  // namespace headroom::app
