#include "gpu/control_restorer.h"

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/testing/embedded_catalogs.h"
#include "gpu/sim/sim_device.h"

namespace headroom::gpu {
namespace {

using catalog::testing::A100;

TEST(ControlRestorerTest, RestoresOnDestructionAndOnRequest) {
  core::FakeClock clock;
  sim::SimDevice device(0, A100(), &clock, {});
  ASSERT_TRUE(device.SetPowerLimit(core::Watts(350)));
  {
    auto restorer = ControlRestorer::Save({&device});
    ASSERT_TRUE(restorer);
    ASSERT_TRUE(device.SetPowerLimit(core::Watts(200)));
    ASSERT_TRUE(device.LockSmClocks(core::Megahertz(210), core::Megahertz(1005)));
    ASSERT_TRUE(restorer->Restore());
    EXPECT_EQ(device.PowerLimits()->requested, core::Watts(350));
    EXPECT_FALSE(device.SmClockLock()->has_value());
    ASSERT_TRUE(device.SetPowerLimit(core::Watts(150)));  // changed again, then out of scope
  }
  EXPECT_EQ(device.PowerLimits()->requested, core::Watts(350));
}

TEST(ControlRestorerTest, PutsBackAnExistingLock) {
  core::FakeClock clock;
  sim::SimDevice device(0, A100(), &clock, {});
  ASSERT_TRUE(device.LockSmClocks(core::Megahertz(210), core::Megahertz(1200)));
  {
    auto restorer = ControlRestorer::Save({&device});
    ASSERT_TRUE(restorer);
    ASSERT_TRUE(device.ResetSmClocks());
  }
  ASSERT_TRUE(device.SmClockLock()->has_value());
  EXPECT_EQ(device.SmClockLock()->value().max, core::Megahertz(1200));
}

sim::SimOptions WithPowerSmoothing() {
  sim::SimOptions options;
  options.power_smoothing = true;
  return options;
}

TEST(ControlRestorerTest, RestoresPowerSmoothingOnRequestAndOnDestruction) {
  core::FakeClock clock;
  sim::SimDevice device(0, A100(), &clock, WithPowerSmoothing());
  ASSERT_TRUE(device.ActivatePowerSmoothingProfile(1));
  ASSERT_TRUE(device.SetPowerSmoothingEnabled(true));
  const PowerSmoothingState before = *device.PowerSmoothing();
  auto change = [&device] {
    ASSERT_TRUE(device.UpdatePowerSmoothingProfile(1, {.floor_percent = 70}));
    ASSERT_TRUE(device.UpdatePowerSmoothingProfile(3, {.ramp_up_w_per_s = 42}));
    ASSERT_TRUE(device.ActivatePowerSmoothingProfile(3));
    ASSERT_TRUE(device.SetPowerSmoothingEnabled(false));
  };
  auto same_as_before = [&device, &before] {
    const PowerSmoothingState now = *device.PowerSmoothing();
    EXPECT_EQ(now.enabled, before.enabled);
    EXPECT_EQ(now.active_profile, before.active_profile);
    EXPECT_EQ(now.profiles, before.profiles);
    EXPECT_EQ(now.applied_floor, before.applied_floor);
  };
  {
    auto restorer = ControlRestorer::Save({&device});
    ASSERT_TRUE(restorer);
    EXPECT_NE(restorer->Describe()[0].find("power smoothing on, profile 1"), std::string::npos)
        << restorer->Describe()[0];
    change();
    ASSERT_TRUE(restorer->Restore());
    same_as_before();
    change();  // changed again, then out of scope
  }
  same_as_before();
}

TEST(ControlRestorerTest, LeavesPowerSmoothingAloneOnAGpuWithoutIt) {
  core::FakeClock clock;
  sim::SimDevice device(0, A100(), &clock, {});
  auto restorer = ControlRestorer::Save({&device});
  ASSERT_TRUE(restorer);
  EXPECT_EQ(restorer->Describe()[0].find("smoothing"), std::string::npos);
  // Any smoothing call would fail (kUnimplemented): restoring succeeds because it makes none.
  EXPECT_TRUE(restorer->Restore());
  auto saved = ReadControls(device);
  ASSERT_TRUE(saved);
  EXPECT_FALSE(saved->smoothing.has_value());
}

}  // namespace
}  // namespace headroom::gpu
