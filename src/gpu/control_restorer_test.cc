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

}  // namespace
}  // namespace headroom::gpu
