#include "model/dvfs_sweep.h"

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"

namespace headroom::model {
namespace {

GpuPowerModel A100() {
  static const auto catalog = catalog::HardwareCatalog::Embedded();
  return GpuPowerModel(**catalog->Gpu("a100-80gb-sxm"));
}

TEST(DvfsSweepTest, ClockSweepIsRelativeToTheMaximumClock) {
  const auto rows = SweepClocks(A100(), {core::Megahertz(1410), core::Megahertz(1110)});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[0].prefill.slowdown, 0.0);
  EXPECT_DOUBLE_EQ(rows[0].decode.power_cut, 0.0);
  // Prefill pays for the lower clock in time; decode barely does, and saves energy.
  EXPECT_GT(rows[1].prefill.slowdown, 0.2);
  EXPECT_LT(rows[1].decode.slowdown, 0.05);
  EXPECT_LT(rows[1].decode.energy_rel, 1.0);
}

TEST(DvfsSweepTest, LimitSweepPicksClocksThatFit) {
  const auto rows = SweepPowerLimits(A100(), {core::Watts(400), core::Watts(250)});
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_LE(rows[1].prefill.power.value(), 250.0);
  EXPECT_LT(rows[1].prefill.clock, rows[0].prefill.clock);
  // A 250 W limit does not bind decode (~251 W) by much: its clock stays high.
  EXPECT_GT(rows[1].decode.clock, rows[1].prefill.clock);
}

}  // namespace
}  // namespace headroom::model
