#include "gpu/sim/sim_device.h"

#include <cmath>
#include <functional>

#include <fmt/format.h>

namespace headroom::gpu::sim {
namespace {

using core::Error;
using core::Fail;

// A stable, UUID-shaped identity per (GPU type, index), so runs and tests are reproducible.
std::string SimUuid(const std::string& type, int index) {
  const std::size_t h1 = std::hash<std::string>{}(fmt::format("headroom-sim/{}/{}", type, index));
  const std::size_t h2 = std::hash<std::string>{}(fmt::format("{}/{}/headroom-sim", index, type));
  return fmt::format("GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", h1 & 0xffffffffU,
                     (h1 >> 32) & 0xffffU, (h1 >> 48) & 0xffffU, h2 & 0xffffU,
                     (h2 >> 16) & 0xffffffffffffULL);
}

DeviceInfo MakeInfo(int index, const model::GpuSpec& spec) {
  DeviceInfo info;
  info.index = index;
  info.name = spec.nvml_name;
  info.uuid = SimUuid(spec.name, index);
  info.pci_bus_id = fmt::format("00000000:{:02X}:00.0", 0x10 + index);
  info.catalog_type = spec.name;
  info.memory_total_bytes = spec.memory_bytes;
  info.sm_clock_max = spec.sm_clock_max;
  info.memory_clock_max = spec.memory_clock;
  return info;
}

// Each value the driver would refuse: a floor outside 0-90% of TDP, a ramp rate that is not
// positive, a negative hysteresis.
core::Status CheckPowerSmoothingUpdate(int index, const PowerSmoothingUpdate& u) {
  auto bad = [index](const char* what, double v, const char* range) {
    return Fail(Error::OutOfRange(
        fmt::format("GPU {}: power-smoothing {} {} is outside the settable range ({})", index, what,
                    v, range)));
  };
  if (u.floor_percent &&
      !(*u.floor_percent >= 0 && *u.floor_percent <= kSimPowerSmoothingFloorMaxPercent)) {
    return bad("floor", *u.floor_percent, "0-90 % of TDP");
  }
  if (u.ramp_up_w_per_s && !(*u.ramp_up_w_per_s > 0 && std::isfinite(*u.ramp_up_w_per_s))) {
    return bad("ramp-up rate", *u.ramp_up_w_per_s, "> 0 W/s");
  }
  if (u.ramp_down_w_per_s && !(*u.ramp_down_w_per_s > 0 && std::isfinite(*u.ramp_down_w_per_s))) {
    return bad("ramp-down rate", *u.ramp_down_w_per_s, "> 0 W/s");
  }
  if (u.ramp_down_hysteresis_ms &&
      !(*u.ramp_down_hysteresis_ms >= 0 && std::isfinite(*u.ramp_down_hysteresis_ms))) {
    return bad("ramp-down hysteresis", *u.ramp_down_hysteresis_ms, ">= 0 ms");
  }
  return core::Ok();
}

}  // namespace

SimDevice::SimDevice(int index, const model::GpuSpec& spec, core::Clock* clock, SimOptions options)
    : info_(MakeInfo(index, spec)),
      spec_(spec),
      clock_(clock),
      options_(std::move(options)),
      gpu_(spec, options_.script),
      last_sync_(clock->Now()) {
  if (options_.mig.has_value()) {
    mig_.emplace(*options_.mig, options_.mig_enabled, info_.index, info_.uuid, options_.processes);
  }
  if (options_.power_smoothing) {
    smoothing_ = PowerSmoothingState{.enabled = false,
                                     .active_profile = 0,
                                     .applied_floor = core::Watts(0),
                                     .lifetime_remaining_percent = 100,
                                     .profiles = kSimPowerSmoothingPresets};
  }
}

core::Status SimDevice::Sync(const char* read) {
  if (options_.unsupported.contains(read)) {
    return Fail(Error::Unimplemented(
        fmt::format("GPU {}: reading {} is not supported by this device", info_.index, read)));
  }
  const core::TimePoint now = clock_->Now();
  if (now > last_sync_) {
    gpu_.Advance(now - last_sync_);
    last_sync_ = now;
  }
  return core::Ok();
}

core::Status SimDevice::CheckControl(const char* what) const {
  if (options_.controls_denied) {
    return Fail(Error::PermissionDenied(
        fmt::format("GPU {}: {}: insufficient permissions (needs root)", info_.index, what)));
  }
  return core::Ok();
}

core::Result<SimMig*> SimDevice::Mig(const char* what) {
  if (!mig_.has_value()) {
    return Fail(Error::Unimplemented(
        fmt::format("GPU {}: {}: {} has no MIG", info_.index, what, info_.name)));
  }
  return &*mig_;
}

core::Result<MigModeState> SimDevice::MigMode() {
  core::MutexLock lock(&mu_);
  HEADROOM_ASSIGN_OR_RETURN(SimMig * mig, Mig("MIG mode"));
  return mig->mode();
}

core::Result<std::vector<MigGpuInstance>> SimDevice::MigInstances() {
  core::MutexLock lock(&mu_);
  HEADROOM_ASSIGN_OR_RETURN(SimMig * mig, Mig("MIG instances"));
  return mig->Instances();
}

core::Result<std::vector<MigProfileInfo>> SimDevice::MigProfiles() {
  core::MutexLock lock(&mu_);
  HEADROOM_ASSIGN_OR_RETURN(SimMig * mig, Mig("MIG profiles"));
  return mig->Profiles();
}

core::Result<int> SimDevice::CreateGpuInstance(int profile_id, int start) {
  HEADROOM_RETURN_IF_ERROR(CheckControl("create GPU instance"));
  core::MutexLock lock(&mu_);
  HEADROOM_ASSIGN_OR_RETURN(SimMig * mig, Mig("create GPU instance"));
  return mig->CreateGpuInstance(profile_id, start);
}

core::Result<int> SimDevice::CreateComputeInstance(int gpu_instance_id, int compute_slices) {
  HEADROOM_RETURN_IF_ERROR(CheckControl("create compute instance"));
  core::MutexLock lock(&mu_);
  HEADROOM_ASSIGN_OR_RETURN(SimMig * mig, Mig("create compute instance"));
  return mig->CreateComputeInstance(gpu_instance_id, compute_slices);
}

core::Status SimDevice::DestroyComputeInstance(int gpu_instance_id, int compute_instance_id) {
  HEADROOM_RETURN_IF_ERROR(CheckControl("destroy compute instance"));
  core::MutexLock lock(&mu_);
  HEADROOM_ASSIGN_OR_RETURN(SimMig * mig, Mig("destroy compute instance"));
  return mig->DestroyComputeInstance(gpu_instance_id, compute_instance_id);
}

core::Status SimDevice::DestroyGpuInstance(int gpu_instance_id) {
  HEADROOM_RETURN_IF_ERROR(CheckControl("destroy GPU instance"));
  core::MutexLock lock(&mu_);
  HEADROOM_ASSIGN_OR_RETURN(SimMig * mig, Mig("destroy GPU instance"));
  return mig->DestroyGpuInstance(gpu_instance_id);
}

core::Result<MigModeState> SimDevice::SetMigMode(bool enabled) {
  core::MutexLock lock(&mu_);
  HEADROOM_RETURN_IF_ERROR(CheckControl("set MIG mode"));
  HEADROOM_ASSIGN_OR_RETURN(SimMig * mig, Mig("set MIG mode"));
  HEADROOM_RETURN_IF_ERROR(mig->SetEnabled(enabled));
  return mig->mode();
}

core::Result<std::vector<GpuProcess>> SimDevice::RunningProcesses() { return options_.processes; }

core::Result<PowerSmoothingState*> SimDevice::Smoothing(const char* what) {
  if (!smoothing_.has_value()) {
    return Fail(Error::Unimplemented(
        fmt::format("GPU {}: {}: {} has no power smoothing (Blackwell and later)", info_.index,
                    what, info_.name)));
  }
  return &*smoothing_;
}

void SimDevice::ApplySmoothing() {
  if (!smoothing_ || !smoothing_->enabled) {
    gpu_.set_smoothing(std::nullopt);
    if (smoothing_) smoothing_->applied_floor = core::Watts(0);
    return;
  }
  const PowerSmoothingProfile& p = smoothing_->profiles[smoothing_->active_profile];
  const core::Watts floor(spec_.power_limit_default.value() * p.floor_percent / 100.0);
  smoothing_->applied_floor = floor;
  gpu_.set_smoothing(
      SimGpu::Smoothing{.floor = floor,
                        .ramp_up_w_per_s = p.ramp_up_w_per_s,
                        .ramp_down_w_per_s = p.ramp_down_w_per_s,
                        .ramp_down_hysteresis = std::chrono::duration_cast<core::Duration>(
                            std::chrono::duration<double, std::milli>(p.ramp_down_hysteresis_ms))});
}

core::Result<PowerSmoothingState> SimDevice::PowerSmoothing() {
  core::MutexLock lock(&mu_);
  HEADROOM_ASSIGN_OR_RETURN(PowerSmoothingState * state, Smoothing("power smoothing"));
  return *state;
}

core::Status SimDevice::SetPowerSmoothingEnabled(bool enabled) {
  HEADROOM_RETURN_IF_ERROR(CheckControl("set power smoothing"));
  core::MutexLock lock(&mu_);
  HEADROOM_ASSIGN_OR_RETURN(PowerSmoothingState * state, Smoothing("set power smoothing"));
  HEADROOM_RETURN_IF_ERROR(Sync(""));
  state->enabled = enabled;
  ApplySmoothing();
  return core::Ok();
}

core::Status SimDevice::ActivatePowerSmoothingProfile(int profile) {
  HEADROOM_RETURN_IF_ERROR(CheckControl("activate power-smoothing profile"));
  core::MutexLock lock(&mu_);
  HEADROOM_ASSIGN_OR_RETURN(PowerSmoothingState * state,
                            Smoothing("activate power-smoothing profile"));
  if (profile < 0 || profile >= static_cast<int>(state->profiles.size())) {
    return Fail(Error::OutOfRange(
        fmt::format("GPU {}: power-smoothing profile {} does not exist (presets 0-{})", info_.index,
                    profile, state->profiles.size() - 1)));
  }
  HEADROOM_RETURN_IF_ERROR(Sync(""));
  state->active_profile = profile;
  ApplySmoothing();
  return core::Ok();
}

core::Status SimDevice::UpdatePowerSmoothingProfile(int profile,
                                                    const PowerSmoothingUpdate& update) {
  HEADROOM_RETURN_IF_ERROR(CheckControl("update power-smoothing profile"));
  core::MutexLock lock(&mu_);
  HEADROOM_ASSIGN_OR_RETURN(PowerSmoothingState * state,
                            Smoothing("update power-smoothing profile"));
  if (profile < 0 || profile >= static_cast<int>(state->profiles.size())) {
    return Fail(Error::OutOfRange(
        fmt::format("GPU {}: power-smoothing profile {} does not exist (presets 0-{})", info_.index,
                    profile, state->profiles.size() - 1)));
  }
  HEADROOM_RETURN_IF_ERROR(CheckPowerSmoothingUpdate(info_.index, update));
  HEADROOM_RETURN_IF_ERROR(Sync(""));
  PowerSmoothingProfile& p = state->profiles[profile];
  p.floor_percent = update.floor_percent.value_or(p.floor_percent);
  p.ramp_up_w_per_s = update.ramp_up_w_per_s.value_or(p.ramp_up_w_per_s);
  p.ramp_down_w_per_s = update.ramp_down_w_per_s.value_or(p.ramp_down_w_per_s);
  p.ramp_down_hysteresis_ms = update.ramp_down_hysteresis_ms.value_or(p.ramp_down_hysteresis_ms);
  ApplySmoothing();
  return core::Ok();
}

core::Status SimDevice::RestoreMig(bool enabled, const std::vector<MigGpuInstance>& instances) {
  core::MutexLock lock(&mu_);
  HEADROOM_ASSIGN_OR_RETURN(SimMig * mig, Mig("restore MIG state"));
  return mig->Restore(enabled, instances);
}

core::Result<core::Watts> SimDevice::PowerInstant() {
  return Read("power_instant", [](const SimGpu& g) { return g.instant_power(); });
}

core::Result<core::Watts> SimDevice::PowerAverage() {
  return Read("power_average", [](const SimGpu& g) { return g.average_power(); });
}

core::Result<core::Joules> SimDevice::EnergyCounter() {
  return Read("energy", [](const SimGpu& g) { return g.energy_counter(); });
}

core::Result<std::vector<PowerSample>> SimDevice::PowerSamples(std::uint64_t after_us) {
  return Read("power_samples", [after_us](const SimGpu& g) {
    std::vector<PowerSample> out;
    for (const PowerSample& s : g.power_history()) {
      if (s.timestamp_us > after_us) out.push_back(s);
    }
    return out;
  });
}

core::Result<core::Megahertz> SimDevice::SmClock() {
  return Read("sm_clock", [](const SimGpu& g) { return g.sm_clock(); });
}

core::Result<core::Megahertz> SimDevice::MemoryClock() {
  return Read("memory_clock", [](const SimGpu& g) { return g.spec().memory_clock; });
}

core::Result<std::vector<core::Megahertz>> SimDevice::SupportedSmClocks() {
  return Read("supported_clocks", [](const SimGpu& g) { return g.spec().SupportedSmClocks(); });
}

core::Result<UtilizationRates> SimDevice::Utilization() {
  return Read("utilization", [](const SimGpu& g) { return g.utilization(); });
}

core::Result<core::Celsius> SimDevice::Temperature() {
  return Read("temperature", [](const SimGpu& g) { return g.temperature(); });
}

core::Result<MemoryUsage> SimDevice::Memory() {
  return Read("memory", [](const SimGpu& g) {
    const auto total = g.spec().memory_bytes;
    return MemoryUsage{.used_bytes = static_cast<std::uint64_t>(static_cast<double>(total) *
                                                                g.memory_used_fraction()),
                       .total_bytes = total};
  });
}

core::Result<PowerLimitState> SimDevice::PowerLimits() {
  return Read("power_limits", [](const SimGpu& g) {
    const model::GpuSpec& s = g.spec();
    return PowerLimitState{.min = s.power_limit_min,
                           .max = s.power_limit_max,
                           .default_limit = s.power_limit_default,
                           .requested = g.power_limit(),
                           .enforced = g.power_limit()};
  });
}

core::Result<std::uint64_t> SimDevice::ThrottleReasons() {
  return Read("throttle_reasons", [](const SimGpu& g) { return g.throttle_reasons(); });
}

core::Result<std::optional<ClockLock>> SimDevice::SmClockLock() {
  return Read("clock_lock", [](const SimGpu& g) { return g.clock_lock(); });
}

core::Status SimDevice::SetPowerLimit(core::Watts limit) {
  HEADROOM_RETURN_IF_ERROR(CheckControl("set power limit"));
  if (limit < spec_.power_limit_min || limit > spec_.power_limit_max) {
    return Fail(Error::OutOfRange(fmt::format(
        "GPU {}: power limit {} W is outside the settable range [{}, {}] W", info_.index,
        limit.value(), spec_.power_limit_min.value(), spec_.power_limit_max.value())));
  }
  core::MutexLock lock(&mu_);
  HEADROOM_RETURN_IF_ERROR(Sync("power_limits"));
  gpu_.set_power_limit(limit);
  return core::Ok();
}

core::Status SimDevice::ResetPowerLimit() { return SetPowerLimit(spec_.power_limit_default); }

core::Status SimDevice::LockSmClocks(core::Megahertz min, core::Megahertz max) {
  HEADROOM_RETURN_IF_ERROR(CheckControl("lock SM clocks"));
  if (min > max || min < spec_.sm_clock_min || max > spec_.sm_clock_max) {
    return Fail(Error::OutOfRange(fmt::format(
        "GPU {}: SM clock lock [{}, {}] MHz is outside the supported range [{}, {}] MHz or "
        "has min > max",
        info_.index, min.value(), max.value(), spec_.sm_clock_min.value(),
        spec_.sm_clock_max.value())));
  }
  core::MutexLock lock(&mu_);
  HEADROOM_RETURN_IF_ERROR(Sync("clock_lock"));
  // The driver rounds a lock to supported clocks; do the same so reads show what is in force.
  gpu_.set_clock_lock(ClockLock{spec_.SnapClock(min), spec_.SnapClock(max)});
  return core::Ok();
}

core::Status SimDevice::ResetSmClocks() {
  HEADROOM_RETURN_IF_ERROR(CheckControl("reset SM clocks"));
  core::MutexLock lock(&mu_);
  HEADROOM_RETURN_IF_ERROR(Sync("clock_lock"));
  gpu_.set_clock_lock(std::nullopt);
  return core::Ok();
}

core::Joules SimDevice::TrueEnergy() {
  core::MutexLock lock(&mu_);
  (void)Sync("");
  return gpu_.true_energy();
}

void SimDevice::SetScript(LoadScript script) {
  core::MutexLock lock(&mu_);
  (void)Sync("");
  gpu_.set_script(std::move(script));
}

std::vector<std::unique_ptr<Device>> CreateSimDevices(const model::GpuSpec& spec, int count,
                                                      core::Clock* clock,
                                                      const SimOptions& options) {
  std::vector<std::unique_ptr<Device>> devices;
  for (int i = 0; i < count; ++i) {
    devices.push_back(std::make_unique<SimDevice>(i, spec, clock, options));
  }
  return devices;
}

}  // namespace headroom::gpu::sim
