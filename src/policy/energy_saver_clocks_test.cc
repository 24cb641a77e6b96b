#include "policy/energy_saver_clocks.h"

#include <gtest/gtest.h>

namespace headroom::policy {
namespace {

model::GpuSpec A100Like() {
  model::GpuSpec spec;
  spec.name = "a100-like";
  spec.sm_clock_min = core::Megahertz(210);
  spec.sm_clock_max = core::Megahertz(1410);
  spec.sm_clock_step = core::Megahertz(15);
  return spec;
}

TEST(EnergySaverClocksTest, ThinnedToFivePercentStepsDownToTheFloor) {
  const model::GpuSpec spec = A100Like();
  std::vector<core::Megahertz> supported;
  // The driver's list, lowest first, with one clock above the catalog's range.
  for (double f = 210; f <= 1425; f += 15) supported.emplace_back(f);
  auto clocks = EnergySaverClocks(supported, spec);
  ASSERT_TRUE(clocks) << clocks.error().message();
  ASSERT_FALSE(clocks->empty());
  EXPECT_EQ(clocks->front().value(), 1410);
  for (std::size_t k = 1; k < clocks->size(); ++k) {
    const double gap = (*clocks)[k - 1].value() - (*clocks)[k].value();
    EXPECT_GE(gap, 0.05 * 1410 - 0.1);
    EXPECT_LT(gap, 0.05 * 1410 + 15);  // the next clock of the grid past the step
  }
  EXPECT_GE(clocks->back().value(), 0.5 * 1410);
  EXPECT_LT(clocks->back().value(), 0.5 * 1410 + 0.05 * 1410 + 15);

  auto deeper = EnergySaverClocks(supported, spec, 0.3);
  ASSERT_TRUE(deeper);
  EXPECT_GT(deeper->size(), clocks->size());
}

TEST(EnergySaverClocksTest, BadFloorOrNoClockInRangeIsAnError) {
  const model::GpuSpec spec = A100Like();
  const std::vector<core::Megahertz> supported = {core::Megahertz(1410), core::Megahertz(1395)};
  EXPECT_FALSE(EnergySaverClocks(supported, spec, 0));
  EXPECT_FALSE(EnergySaverClocks(supported, spec, 1.5));
  auto none = EnergySaverClocks({core::Megahertz(2000)}, spec);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("a100-like"), std::string::npos);
  auto one = EnergySaverClocks(supported, spec, 1.0);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->size(), 1u);  // a floor at the top leaves the highest clock alone
}

}  // namespace
}  // namespace headroom::policy
