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

TEST(GpuSpecTest, ClocksInRangeSnapsAndNamesTheFirstOutside) {
  GpuSpec spec = A100Clocks();
  spec.name = "a100";
  const std::vector<double> ok = {1400, 210};
  auto clocks = spec.ClocksInRange(ok);
  ASSERT_TRUE(clocks);
  EXPECT_EQ(*clocks, (std::vector<core::Megahertz>{core::Megahertz(1395), core::Megahertz(210)}));
  const std::vector<double> bad = {1200, 1500};
  auto out = spec.ClocksInRange(bad);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().code(), core::Code::kOutOfRange);
  EXPECT_EQ(out.error().message(), "1500 MHz is outside a100's range 210-1410 MHz");
}

TEST(GpuSpecTest, PowerLimitsInRangeNamesTheFirstOutside) {
  GpuSpec spec;
  spec.name = "a100";
  spec.power_limit_min = core::Watts(100);
  spec.power_limit_max = core::Watts(400);
  const std::vector<double> ok = {100, 400};
  ASSERT_TRUE(spec.PowerLimitsInRange(ok));
  const std::vector<double> bad = {99};
  auto out = spec.PowerLimitsInRange(bad);
  ASSERT_FALSE(out);
  EXPECT_EQ(out.error().message(), "99 W is outside a100's settable range 100-400 W");
}

// The rest of the server: its idle floor with every GPU idle, its at-load value with every GPU
// at TDP, a straight line between (and beyond).
TEST(GpuSpecTest, NonGpuPowerRisesLinearlyFromItsIdleFloor) {
  GpuSpec gpu;
  gpu.tdp = core::Watts(400);
  gpu.idle_power = core::Watts(63);
  ServerSpec server;
  server.gpus_per_server = 8;
  server.non_gpu_power = core::Watts(3300);
  server.non_gpu_idle_power = core::Watts(2966);
  EXPECT_NEAR(NonGpuSlope(server, gpu), 334.0 / (8 * 337), 1e-12);
  EXPECT_NEAR(NonGpuPower(server, gpu, core::Watts(8 * 63)).value(), 2966, 1e-9);
  EXPECT_NEAR(NonGpuPower(server, gpu, core::Watts(8 * 400)).value(), 3300, 1e-9);
  EXPECT_NEAR(NonGpuPower(server, gpu, core::Watts(8 * 63 + 8 * 337 / 2.0)).value(), 3133, 1e-9);
  server.non_gpu_idle_power = server.non_gpu_power;  // a constant
  EXPECT_EQ(NonGpuSlope(server, gpu), 0);
  EXPECT_EQ(NonGpuPower(server, gpu, core::Watts(1000)), core::Watts(3300));
}

}  // namespace
}  // namespace headroom::model
