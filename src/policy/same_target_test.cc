#include "policy/same_target.h"

#include <gtest/gtest.h>

namespace headroom::policy {
namespace {

// An H100-SXM's clock range (data/hardware/h100-80gb-sxm.yaml) on a grid of `step_mhz`: grids
// other than the catalog's 15 MHz, where a fixed tolerance (8 MHz, half the A100's step) and
// the grid disagree.
model::GpuSpec H100OnGrid(double step_mhz) {
  model::GpuSpec gpu;
  gpu.name = "h100-80gb-sxm";
  gpu.sm_clock_min = core::Megahertz(345);
  gpu.sm_clock_max = core::Megahertz(1980);
  gpu.sm_clock_step = core::Megahertz(step_mhz);
  return gpu;
}

ServerTargets ClockCapOf(double mhz) { return {.sm_clock_cap = core::Megahertz(mhz)}; }

TEST(SameTargetTest, ClocksAStepApartDifferEvenWithinEightMegahertz) {
  const model::GpuSpec fine = H100OnGrid(5);
  EXPECT_FALSE(SameTargets(ClockCapOf(1400), ClockCapOf(1405), fine));
  EXPECT_TRUE(SameTargets(ClockCapOf(1400), ClockCapOf(1402), fine))
      << "within half a step: one grid clock";
}

TEST(SameTargetTest, ClocksOnOneGridClockAreTheSameWhateverTheirDistance) {
  const model::GpuSpec coarse = H100OnGrid(30);
  // 1937 and 1964 both land on 1950, 27 MHz apart.
  EXPECT_TRUE(SameTargets(ClockCapOf(1937), ClockCapOf(1964), coarse));
  EXPECT_FALSE(SameTargets(ClockCapOf(1950), ClockCapOf(1980), coarse));
  // Beyond the range a cap lands on the range's end.
  EXPECT_TRUE(SameTargets(ClockCapOf(2100), ClockCapOf(1980), coarse));
}

TEST(SameTargetTest, BrakePresenceAndPowerLimitsCount) {
  const model::GpuSpec gpu = H100OnGrid(15);
  EXPECT_FALSE(SameTargets({}, ClockCapOf(1980), gpu)) << "a cap at the top is still a cap";
  EXPECT_FALSE(SameTargets({.brake = true}, {}, gpu));
  const ServerTargets limit{.power_limit = core::Watts(500)};
  EXPECT_TRUE(SameTargets(limit, {.power_limit = core::Watts(500.4)}, gpu));
  EXPECT_FALSE(SameTargets(limit, {.power_limit = core::Watts(501)}, gpu));
  EXPECT_FALSE(SameTargets(limit, {}, gpu));
  EXPECT_TRUE(SamePowerLimit(core::Watts(300), core::Watts(299.5)));
}

TEST(SameTargetDeathTest, AGpuWithoutAGridIsABug) {
  EXPECT_DEATH(SameClock(core::Megahertz(1400), core::Megahertz(1500), H100OnGrid(0)),
               "no SM clock grid");
}

}  // namespace
}  // namespace headroom::policy
