#include "policy/capping_ladder.h"

#include <gtest/gtest.h>

namespace headroom::policy {
namespace {

using std::chrono::seconds;

ServerTargets Clock(double mhz) { return ServerTargets{.sm_clock_cap = core::Megahertz(mhz)}; }

Rung MakeRung(std::string state, double enter, double exit, double lp_mhz) {
  return Rung{.state = std::move(state),
              .threshold = "T",
              .enter = enter,
              .dwell = seconds(0),
              .exit = exit,
              .predictive = false,
              .lp = Clock(lp_mhz),
              .hp = {}};
}

// normal -> a (0.8) -> b (0.9) -> c (0.9 after 30 s in b, caps HP too).
CappingLadder ThreeRungs() {
  Rung c = MakeRung("c", 0.9, 0.85, 1000);
  c.dwell = seconds(30);
  c.hp = Clock(1300);
  return CappingLadder({MakeRung("a", 0.8, 0.75, 1200), MakeRung("b", 0.9, 0.85, 1000), c});
}

TEST(CappingLadderTest, ClimbsSeveralRungsAtOnceButNotPastADwell) {
  CappingLadder ladder = ThreeRungs();
  auto move = ladder.Step(0.95, 0.95, seconds(0), true);
  ASSERT_TRUE(move.has_value());
  EXPECT_EQ(move->from, 0);
  EXPECT_EQ(move->to, 2);
  EXPECT_EQ(ladder.state(), "b");
  EXPECT_EQ(ladder.Targets(ServerPriority::kLow), Clock(1000));
  EXPECT_EQ(ladder.Targets(ServerPriority::kHigh), ServerTargets{});
  EXPECT_FALSE(ladder.Step(0.95, 0.95, seconds(29), true).has_value());
  move = ladder.Step(0.95, 0.95, seconds(30), true);
  ASSERT_TRUE(move.has_value());
  EXPECT_EQ(move->reason, "p=0.950 > T=0.9 after 30s in b");
  EXPECT_EQ(ladder.Targets(ServerPriority::kHigh), Clock(1300));
}

TEST(CappingLadderTest, DescendsAsFarAsPAllowsOnlyWhenAllowed) {
  CappingLadder ladder = ThreeRungs();
  ASSERT_TRUE(ladder.Step(0.95, 0.95, seconds(0), true).has_value());
  ASSERT_TRUE(ladder.Step(0.95, 0.95, seconds(30), true).has_value());
  EXPECT_FALSE(ladder.Step(0.5, 0.5, seconds(31), false).has_value());
  EXPECT_EQ(ladder.state(), "c");
  auto move = ladder.Step(0.5, 0.5, seconds(32), true);
  ASSERT_TRUE(move.has_value());
  EXPECT_EQ(move->to, 0);
  EXPECT_EQ(move->reason, "p=0.500 < T-0.05=0.75");
  EXPECT_EQ(ladder.state(), "normal");
  EXPECT_EQ(ladder.Targets(ServerPriority::kLow), ServerTargets{});
}

TEST(CappingLadderTest, DwellRestartsAfterLeavingTheRungBelow) {
  CappingLadder ladder = ThreeRungs();
  ASSERT_TRUE(ladder.Step(0.95, 0.95, seconds(0), true).has_value());   // b
  ASSERT_TRUE(ladder.Step(0.80, 0.80, seconds(20), true).has_value());  // a
  ASSERT_TRUE(ladder.Step(0.95, 0.95, seconds(25), true).has_value());  // b again
  EXPECT_FALSE(ladder.Step(0.95, 0.95, seconds(50), true).has_value());
  EXPECT_EQ(ladder.state(), "b");
  EXPECT_TRUE(ladder.Step(0.95, 0.95, seconds(55), true).has_value());
  EXPECT_EQ(ladder.state(), "c");
}

TEST(CappingLadderTest, PredictiveRungsUseThePrediction) {
  Rung a = MakeRung("a", 0.8, 0.75, 1200);
  a.predictive = true;
  CappingLadder ladder({a, MakeRung("b", 0.9, 0.85, 1000)});
  auto move = ladder.Step(0.78, 0.95, seconds(0), true);
  ASSERT_TRUE(move.has_value());
  EXPECT_EQ(ladder.state(), "a") << "b is not predictive";
  EXPECT_EQ(move->reason, "predicted p=0.950 (p=0.780) > T=0.8");
  EXPECT_FALSE(ladder.Step(0.70, 0.76, seconds(1), true).has_value()) << "prediction holds a";
  EXPECT_TRUE(ladder.Step(0.70, 0.70, seconds(2), true).has_value());
}

TEST(CappingLadderTest, StatesListsEachNameOnce) {
  CappingLadder ladder({MakeRung("t1", 0.8, 0.75, 1200), MakeRung("t2", 0.9, 0.85, 1000),
                        MakeRung("t2", 0.9, 0.85, 900)});
  EXPECT_EQ(ladder.states(), (std::vector<std::string>{"normal", "t1", "t2"}));
}

}  // namespace
}  // namespace headroom::policy
