#include "gpu/control_restorer.h"

#include <cstdio>

#include <fmt/format.h>

namespace headroom::gpu {

core::Result<ControlSettings> ReadControls(Device& device) {
  auto limits = device.PowerLimits();
  if (!limits) {
    return core::Fail(limits.error().WithContext(fmt::format(
        "GPU {}: cannot save its power limit, so nothing will be changed", device.info().index)));
  }
  auto lock = device.SmClockLock();
  ControlSettings settings{.power_limit = limits->requested, .lock = lock ? *lock : std::nullopt};
  if (auto smoothing = device.PowerSmoothing()) {
    settings.smoothing = SmoothingSettings{.enabled = smoothing->enabled,
                                           .active_profile = smoothing->active_profile,
                                           .profiles = smoothing->profiles};
  }
  return settings;
}

core::Status RestoreSmoothing(Device& device, const SmoothingSettings& want) {
  auto now = device.PowerSmoothing();
  if (!now) {
    return core::Fail(now.error().WithContext(
        fmt::format("GPU {}: restoring power smoothing", device.info().index)));
  }
  std::optional<core::Error> first;
  auto keep = [&first](core::Status st) {
    if (!st && !first) first = st.error();
  };
  for (size_t p = 0; p < want.profiles.size() && p < now->profiles.size(); ++p) {
    const PowerSmoothingProfile& w = want.profiles[p];
    if (now->profiles[p] == w) continue;
    keep(device.UpdatePowerSmoothingProfile(
        static_cast<int>(p), {.floor_percent = w.floor_percent,
                              .ramp_up_w_per_s = w.ramp_up_w_per_s,
                              .ramp_down_w_per_s = w.ramp_down_w_per_s,
                              .ramp_down_hysteresis_ms = w.ramp_down_hysteresis_ms}));
  }
  if (now->active_profile != want.active_profile) {
    keep(device.ActivatePowerSmoothingProfile(want.active_profile));
  }
  if (now->enabled != want.enabled) keep(device.SetPowerSmoothingEnabled(want.enabled));
  if (first) return core::Fail(*first);
  return core::Ok();
}

core::Status RestoreControls(Device& device, const ControlSettings& settings) {
  std::optional<core::Error> first;
  auto keep = [&first](core::Status st) {
    if (!st && !first) first = st.error();
  };
  auto limits = device.PowerLimits();
  if (!limits || limits->requested != settings.power_limit) {
    keep(device.SetPowerLimit(settings.power_limit));
  }
  auto lock = device.SmClockLock();
  const std::optional<ClockLock>& want = settings.lock;
  const bool same_lock = lock && lock->has_value() == want.has_value() &&
                         (!want || ((*lock)->min == want->min && (*lock)->max == want->max));
  if (!same_lock) keep(want ? device.LockSmClocks(want->min, want->max) : device.ResetSmClocks());
  if (settings.smoothing) keep(RestoreSmoothing(device, *settings.smoothing));
  if (first) return core::Fail(*first);
  return core::Ok();
}

std::string DescribeControls(const ControlSettings& settings) {
  std::string text = fmt::format(
      "power limit {:.0f} W, SM clocks {}", settings.power_limit.value(),
      settings.lock ? fmt::format("locked {:.0f}-{:.0f} MHz", settings.lock->min.value(),
                                  settings.lock->max.value())
                    : std::string("unlocked"));
  if (settings.smoothing) {
    text +=
        fmt::format(", power smoothing {}, profile {}", settings.smoothing->enabled ? "on" : "off",
                    settings.smoothing->active_profile);
  }
  return text;
}

core::Result<ControlRestorer> ControlRestorer::Save(std::vector<Device*> devices) {
  std::vector<Saved> saved;
  for (Device* d : devices) {
    HEADROOM_ASSIGN_OR_RETURN(ControlSettings settings, ReadControls(*d));
    saved.push_back({d, settings});
  }
  return ControlRestorer(std::move(saved));
}

ControlRestorer::~ControlRestorer() {
  if (auto st = Restore(); !st) {
    std::fprintf(stderr, "headroom: restoring GPU settings: %s\n", st.error().message().c_str());
  }
}

core::Status ControlRestorer::Restore() {
  std::optional<core::Error> first;
  for (const Saved& s : saved_) {
    if (auto st = RestoreControls(*s.device, s.settings); !st && !first) first = st.error();
  }
  if (first) return core::Fail(*first);
  return core::Ok();
}

std::vector<std::string> ControlRestorer::Describe() const {
  std::vector<std::string> out;
  for (const Saved& s : saved_) {
    out.push_back(fmt::format("GPU {}: {}", s.device->info().index, DescribeControls(s.settings)));
  }
  return out;
}

}  // namespace headroom::gpu
