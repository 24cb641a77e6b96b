// FaultDevice: a Device decorator that forwards to another Device until told to fail, then
// returns the given error from every call (a GPU that fell off the bus, a driver that went away).
// For tests. Thread-safe if the wrapped device is.
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

 private:
  template <class R, class... Args, class... Passed>
  R Call(R (Device::*method)(Args...), Passed... args) {
    {
      std::lock_guard lock(mu_);
      if (fault_) return core::Fail(*fault_);
    }
    return (inner_.get()->*method)(args...);
  }

  std::unique_ptr<Device> inner_;
  std::mutex mu_;
  std::optional<core::Error> fault_;
};

}  // namespace headroom::gpu::testing

#endif  // HEADROOM_GPU_TESTING_FAULT_DEVICE_H_
