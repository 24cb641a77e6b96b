#include "policy/brake_guard.h"

#include <gtest/gtest.h>

namespace headroom::policy {
namespace {

using std::chrono::seconds;

BrakeGuard Guard() {
  return BrakeGuard(BrakeParams{.threshold = 1.0, .release = 0.95, .hold = seconds(10)});
}

TEST(BrakeGuardTest, EngagesOnlyAboveTheThreshold) {
  BrakeGuard guard = Guard();
  EXPECT_FALSE(guard.Step(1.0, seconds(0), true).has_value());
  EXPECT_FALSE(guard.on());
  auto reason = guard.Step(1.02, seconds(1), true);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, "p=1.020 > brake=1");
  EXPECT_TRUE(guard.on());
}

TEST(BrakeGuardTest, HoldsThenReleasesBelowTheReleaseThreshold) {
  BrakeGuard guard = Guard();
  ASSERT_TRUE(guard.Step(1.1, seconds(100), true).has_value());
  EXPECT_FALSE(guard.Step(0.5, seconds(109), true).has_value()) << "held only 9 s";
  EXPECT_TRUE(guard.on());
  EXPECT_FALSE(guard.Step(0.96, seconds(111), true).has_value()) << "0.96 is not below 0.95";
  EXPECT_TRUE(guard.on());
  auto reason = guard.Step(0.94, seconds(112), true);
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(*reason, "p=0.940 < release=0.95 after 12s braked");
  EXPECT_FALSE(guard.on());
  EXPECT_EQ(guard.released_at(), seconds(112));
}

TEST(BrakeGuardTest, NeverReleasesWhenNotAllowed) {
  BrakeGuard guard = Guard();
  ASSERT_TRUE(guard.Step(1.1, seconds(0), true).has_value());
  EXPECT_FALSE(guard.Step(0.3, seconds(60), false).has_value());
  EXPECT_TRUE(guard.on());
  EXPECT_TRUE(guard.Step(0.3, seconds(61), true).has_value());
  EXPECT_FALSE(guard.on());
}

TEST(BrakeGuardTest, ReengagesAfterRelease) {
  BrakeGuard guard = Guard();
  ASSERT_TRUE(guard.Step(1.1, seconds(0), true).has_value());
  ASSERT_TRUE(guard.Step(0.5, seconds(10), true).has_value());
  ASSERT_TRUE(guard.Step(1.05, seconds(11), true).has_value());
  EXPECT_TRUE(guard.on());
  EXPECT_FALSE(guard.Step(0.5, seconds(20), true).has_value()) << "the hold restarts";
}

}  // namespace
}  // namespace headroom::policy
