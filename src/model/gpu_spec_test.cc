#include "model/gpu_spec.h"

#include <gtest/gtest.h>

namespace headroom::model {
namespace {

GpuSpec A100Clocks() {
  GpuSpec spec;
  spec.sm_clock_min = core::Megahertz(210);
  spec.sm_clock_max = core::Megahertz(1410);
  spec.sm_clock_step = core::Megahertz(15);
  return spec;
}

TEST(GpuSpecTest, SupportedClocksFromMaxDownOnTheGrid) {
  const auto clocks = A100Clocks().SupportedSmClocks();
  ASSERT_EQ(clocks.size(), 81u);  // (1410 - 210) / 15 + 1
  EXPECT_EQ(clocks.front(), core::Megahertz(1410));
  EXPECT_EQ(clocks[1], core::Megahertz(1395));
  EXPECT_EQ(clocks.back(), core::Megahertz(210));
}

TEST(GpuSpecTest, SnapClockRoundsAndClamps) {
  const GpuSpec spec = A100Clocks();
  EXPECT_EQ(spec.SnapClock(core::Megahertz(1400)), core::Megahertz(1395));
  EXPECT_EQ(spec.SnapClock(core::Megahertz(1406)), core::Megahertz(1410));
  EXPECT_EQ(spec.SnapClock(core::Megahertz(5000)), core::Megahertz(1410));
  EXPECT_EQ(spec.SnapClock(core::Megahertz(10)), core::Megahertz(210));
}

}  // namespace
}  // namespace headroom::model
