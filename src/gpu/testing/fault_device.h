// FaultDevice: a Device decorator that forwards to another Device until told to fail, then
// returns the given error from every call (a GPU that fell off the bus, a driver that went away),
// or that fails one chosen MIG create call (a driver refusing mid-reconfiguration). For tests.
// Thread-safe if the wrapped device is.
#ifndef HEADROOM_GPU_TESTING_FAULT_DEVICE_H_
#define HEADROOM_GPU_TESTING_FAULT_DEVICE_H_

#include <memory>
#include <mutex>
#include <optional>

#include "gpu/device.h"

namespace headroom::gpu::testing {

class FaultDevice final : public Device {
 public:
  explicit FaultDevice(std::unique_ptr<Device> inner) : inner_(std::move(inner)) {}

  void FailWith(core::Error error) {
    std::lock_guard lock(mu_);
    fault_ = std::move(error);
  }

  const DeviceInfo& info() const override { return inner_->info(); }
  core::Result<core::Watts> PowerInstant() override { return Call(&Device::PowerInstant); }
  core::Result<core::Watts> PowerAverage() override { return Call(&Device::PowerAverage); }
  core::Result<core::Joules> EnergyCounter() override { return Call(&Device::EnergyCounter); }
  core::Result<std::vector<PowerSample>> PowerSamples(std::uint64_t after_us) override {
    return Call(&Device::PowerSamples, after_us);
  }
  core::Result<core::Megahertz> SmClock() override { return Call(&Device::SmClock); }
  core::Result<core::Megahertz> MemoryClock() override { return Call(&Device::MemoryClock); }
  core::Result<std::vector<core::Megahertz>> SupportedSmClocks() override {
    return Call(&Device::SupportedSmClocks);
  }
  core::Result<UtilizationRates> Utilization() override { return Call(&Device::Utilization); }
  core::Result<core::Celsius> Temperature() override { return Call(&Device::Temperature); }
  core::Result<MemoryUsage> Memory() override { return Call(&Device::Memory); }
  core::Result<PowerLimitState> PowerLimits() override { return Call(&Device::PowerLimits); }
  core::Result<std::uint64_t> ThrottleReasons() override { return Call(&Device::ThrottleReasons); }
  core::Result<std::optional<ClockLock>> SmClockLock() override {
    return Call(&Device::SmClockLock);
  }
  core::Status SetPowerLimit(core::Watts limit) override {
    return Call(&Device::SetPowerLimit, limit);
  }
  core::Status ResetPowerLimit() override { return Call(&Device::ResetPowerLimit); }
  core::Status LockSmClocks(core::Megahertz min, core::Megahertz max) override {
    return Call(&Device::LockSmClocks, min, max);
  }
  core::Status ResetSmClocks() override { return Call(&Device::ResetSmClocks); }

  // The `nth` MIG create call (GPU or compute instance, counting from 1 from now) fails with
  // `error`; the others go through.
  void FailMigCreate(int nth, core::Error error) {
    std::lock_guard lock(mu_);
    creates_until_fault_ = nth;
    create_fault_ = std::move(error);
  }

  core::Result<MigModeState> MigMode() override { return Call(&Device::MigMode); }
  core::Result<std::vector<MigGpuInstance>> MigInstances() override {
    return Call(&Device::MigInstances);
  }
  core::Result<std::vector<MigProfileInfo>> MigProfiles() override {
    return Call(&Device::MigProfiles);
  }
  core::Result<int> CreateGpuInstance(int profile_id, int start) override {
    if (auto fault = CreateFault()) return core::Fail(*fault);
    return Call(&Device::CreateGpuInstance, profile_id, start);
  }
  core::Result<int> CreateComputeInstance(int gpu_instance_id, int compute_slices) override {
    if (auto fault = CreateFault()) return core::Fail(*fault);
    return Call(&Device::CreateComputeInstance, gpu_instance_id, compute_slices);
  }
  core::Status DestroyComputeInstance(int gpu_instance_id, int compute_instance_id) override {
    return Call(&Device::DestroyComputeInstance, gpu_instance_id, compute_instance_id);
  }
  core::Status DestroyGpuInstance(int gpu_instance_id) override {
    return Call(&Device::DestroyGpuInstance, gpu_instance_id);
  }
  core::Result<MigModeState> SetMigMode(bool enabled) override {
    return Call(&Device::SetMigMode, enabled);
  }
  core::Result<std::vector<GpuProcess>> RunningProcesses() override {
    return Call(&Device::RunningProcesses);
  }
  core::Result<PowerSmoothingState> PowerSmoothing() override {
    return Call(&Device::PowerSmoothing);
  }
  core::Status SetPowerSmoothingEnabled(bool enabled) override {
    return Call(&Device::SetPowerSmoothingEnabled, enabled);
  }
  core::Status ActivatePowerSmoothingProfile(int profile) override {
    return Call(&Device::ActivatePowerSmoothingProfile, profile);
  }
  core::Status UpdatePowerSmoothingProfile(int profile,
                                           const PowerSmoothingUpdate& update) override {
    return Call(&Device::UpdatePowerSmoothingProfile, profile, update);
  }

 private:
  template <class R, class... Args, class... Passed>
  R Call(R (Device::*method)(Args...), Passed... args) {
    {
      std::lock_guard lock(mu_);
      if (fault_) return core::Fail(*fault_);
    }
    return (inner_.get()->*method)(args...);
  }

  std::optional<core::Error> CreateFault() {
    std::lock_guard lock(mu_);
    if (creates_until_fault_ <= 0 || --creates_until_fault_ > 0) return std::nullopt;
    return create_fault_;
  }

  std::unique_ptr<Device> inner_;
  std::mutex mu_;
  std::optional<core::Error> fault_;
  int creates_until_fault_ = 0;  // 0: no create fault armed
  std::optional<core::Error> create_fault_;
};

}  // namespace headroom::gpu::testing

#endif  // HEADROOM_GPU_TESTING_FAULT_DEVICE_H_
