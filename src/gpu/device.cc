#include "gpu/device.h"

#include <array>
#include <utility>

#include <fmt/format.h>

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

namespace {

core::Error NoMig(const DeviceInfo& info, const char* what) {
  return core::Error::Unimplemented(
      fmt::format("GPU {}: {}: this backend has no MIG support", info.index, what));
}

core::Error NoPowerSmoothing(const DeviceInfo& info, const char* what) {
  return core::Error::Unimplemented(fmt::format(
      "GPU {}: {}: power smoothing is not supported by this backend", info.index, what));
}

}  // namespace

core::Result<MigModeState> Device::MigMode() { return core::Fail(NoMig(info(), "MIG mode")); }
core::Result<MigModeState> Device::SetMigMode(bool) {
  return core::Fail(NoMig(info(), "set MIG mode"));
}

core::Result<std::vector<MigGpuInstance>> Device::MigInstances() {
  return core::Fail(NoMig(info(), "MIG instances"));
}

core::Result<std::vector<MigProfileInfo>> Device::MigProfiles() {
  return core::Fail(NoMig(info(), "MIG profiles"));
}

core::Result<int> Device::CreateGpuInstance(int /*profile_id*/, int /*start*/) {
  return core::Fail(NoMig(info(), "create GPU instance"));
}

core::Result<int> Device::CreateComputeInstance(int /*gpu_instance_id*/, int /*compute_slices*/) {
  return core::Fail(NoMig(info(), "create compute instance"));
}

core::Status Device::DestroyComputeInstance(int /*gpu_instance_id*/, int /*compute_instance_id*/) {
  return core::Fail(NoMig(info(), "destroy compute instance"));
}

core::Status Device::DestroyGpuInstance(int /*gpu_instance_id*/) {
  return core::Fail(NoMig(info(), "destroy GPU instance"));
}

core::Result<std::vector<GpuProcess>> Device::RunningProcesses() {
  return core::Fail(core::Error::Unimplemented(
      fmt::format("GPU {}: running processes: not available from this backend", info().index)));
}

core::Result<PowerSmoothingState> Device::PowerSmoothing() {
  return core::Fail(NoPowerSmoothing(info(), "power smoothing"));
}

core::Status Device::SetPowerSmoothingEnabled(bool /*enabled*/) {
  return core::Fail(NoPowerSmoothing(info(), "set power smoothing"));
}

core::Status Device::ActivatePowerSmoothingProfile(int /*profile*/) {
  return core::Fail(NoPowerSmoothing(info(), "activate power-smoothing profile"));
}

core::Status Device::UpdatePowerSmoothingProfile(int /*profile*/,
                                                 const PowerSmoothingUpdate& /*update*/) {
  return core::Fail(NoPowerSmoothing(info(), "update power-smoothing profile"));
}

}  // namespace headroom::gpu
