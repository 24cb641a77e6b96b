#include "gpu/device.h"

#include <gtest/gtest.h>

namespace headroom::gpu {
namespace {

TEST(ThrottleReasonNamesTest, NamesSetBitsInOrder) {
  EXPECT_EQ(ThrottleReasonNames(0), "none");
  EXPECT_EQ(ThrottleReasonNames(kThrottleSwPowerCap), "power_cap");
  EXPECT_EQ(ThrottleReasonNames(kThrottleGpuIdle | kThrottleHwPowerBrake), "idle|power_brake");
  // NVML's bit values, which other tools show too.
  EXPECT_EQ(kThrottleSwPowerCap, 0x4u);
  EXPECT_EQ(kThrottleHwPowerBrake, 0x80u);
}

}  // namespace
}  // namespace headroom::gpu
