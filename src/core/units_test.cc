#include "core/units.h"

#include <gtest/gtest.h>

namespace headroom::core {
namespace {

TEST(UnitsTest, ArithmeticStaysInUnit) {
  const Watts a(300), b(100);
  EXPECT_DOUBLE_EQ((a + b).value(), 400);
  EXPECT_DOUBLE_EQ((a - b).value(), 200);
  EXPECT_DOUBLE_EQ((a * 2).value(), 600);
  EXPECT_DOUBLE_EQ((0.5 * a).value(), 150);
  EXPECT_DOUBLE_EQ(a / b, 3.0);
  EXPECT_LT(b, a);
}

TEST(UnitsTest, EnergyAndPowerConvert) {
  EXPECT_DOUBLE_EQ(EnergyOver(Watts(250), 4.0).value(), 1000);
  EXPECT_DOUBLE_EQ(AveragePower(Joules(1000), 4.0).value(), 250);
}

}  // namespace
}  // namespace headroom::core
