#include "model/power_limiter.h"

#include <cmath>

#include <gtest/gtest.h>

namespace headroom::model {
namespace {

using std::chrono::milliseconds;

TEST(PowerLimiterTest, FollowsTargetWithFirstOrderLag) {
  PowerLimiter limiter(LimiterTraits{milliseconds(200), milliseconds(500)}, core::Megahertz(1410));
  // After one time constant, 1 - 1/e of the way down.
  for (int i = 0; i < 200; ++i) limiter.Step(core::Megahertz(1010), milliseconds(1));
  EXPECT_NEAR(limiter.ceiling().value(), 1410 - 400 * (1 - std::exp(-1.0)), 1.0);
  for (int i = 0; i < 5000; ++i) limiter.Step(core::Megahertz(1010), milliseconds(1));
  EXPECT_NEAR(limiter.ceiling().value(), 1010, 0.5);
}

TEST(PowerLimiterTest, RecoversMoreSlowlyThanItThrottles) {
  PowerLimiter down(LimiterTraits{milliseconds(200), milliseconds(500)}, core::Megahertz(1410));
  down.Step(core::Megahertz(1010), milliseconds(100));
  const double fell = 1410 - down.ceiling().value();
  PowerLimiter up(LimiterTraits{milliseconds(200), milliseconds(500)}, core::Megahertz(1010));
  up.Step(core::Megahertz(1410), milliseconds(100));
  const double rose = up.ceiling().value() - 1010;
  EXPECT_GT(fell, rose);
}

TEST(PowerLimiterTest, ZeroTimeConstantIsImmediate) {
  PowerLimiter limiter(LimiterTraits{milliseconds(0), milliseconds(0)}, core::Megahertz(1410));
  EXPECT_EQ(limiter.Step(core::Megahertz(900), milliseconds(1)), core::Megahertz(900));
}

}  // namespace
}  // namespace headroom::model
