#include "sim/weekly_risk.h"

#include <gtest/gtest.h>

#include "sim/capacity_planner.h"

namespace headroom::sim {
namespace {

// The figures: with no event in n weeks the 95% bound is 1 - 0.05^(1/n).
TEST(WeeklyRiskTest, CleanWeeksBoundIsTheClosedForm) {
  EXPECT_NEAR(WeeklyRiskUpperBound(0, 5, 0.95), 0.4507, 1e-4);
  EXPECT_NEAR(WeeklyRiskUpperBound(0, 59, 0.95), 0.04951, 1e-5);
  EXPECT_NEAR(WeeklyRiskUpperBound(0, 300, 0.95), 0.009936, 1e-6);
  EXPECT_NEAR(WeeklyRiskUpperBound(0, 120, 0.95), 0.02466, 1e-5);
}

// Known one-sided Clopper-Pearson upper bounds (the 0.95 quantile of Beta(k + 1, n - k)),
// computed for these tests by bisection on the exact binomial sum (Python, math.comb).
TEST(WeeklyRiskTest, BoundWithEventsMatchesTheBetaQuantile) {
  EXPECT_NEAR(WeeklyRiskUpperBound(1, 59, 0.95), 0.07790, 1e-4);
  EXPECT_NEAR(WeeklyRiskUpperBound(9, 120, 0.95), 0.12723, 1e-4);
  EXPECT_NEAR(WeeklyRiskUpperBound(1, 10, 0.95), 0.3942, 1e-4);
  EXPECT_NEAR(WeeklyRiskUpperBound(5, 10, 0.90), 0.73268, 1e-4);
  EXPECT_DOUBLE_EQ(WeeklyRiskUpperBound(4, 4, 0.95), 1.0);
}

// Known one-sided lower bounds (P(X >= k) = 1 - confidence), by the same bisection in Python.
TEST(WeeklyRiskTest, LowerBoundMatchesTheExactBinomialSum) {
  EXPECT_DOUBLE_EQ(WeeklyRiskLowerBound(0, 59, 0.95), 0.0);
  EXPECT_NEAR(WeeklyRiskLowerBound(1, 59, 0.95), 0.000869, 1e-6);
  EXPECT_NEAR(WeeklyRiskLowerBound(9, 120, 0.95), 0.039682, 1e-5);
  EXPECT_NEAR(WeeklyRiskLowerBound(5, 10, 0.90), 0.267318, 1e-5);
  EXPECT_NEAR(WeeklyRiskLowerBound(3, 3, 0.95), 0.368403, 1e-5);  // 0.05^(1/3)
  for (int k = 0; k <= 10; ++k) {
    EXPECT_LT(WeeklyRiskLowerBound(k, 10, 0.95), WeeklyRiskUpperBound(k, 10, 0.95)) << k;
  }
}

TEST(WeeklyRiskTest, TheBoundRisesWithEventsAndFallsWithWeeks) {
  for (int k = 0; k < 10; ++k) {
    EXPECT_LT(WeeklyRiskUpperBound(k, 100, 0.95), WeeklyRiskUpperBound(k + 1, 100, 0.95));
    EXPECT_GT(WeeklyRiskUpperBound(k, 100, 0.95), WeeklyRiskUpperBound(k, 101, 0.95));
  }
}

// The rule: at 5% and 95%, 59 clean weeks pass, 58 do not, and one braking week in 59 fails.
TEST(WeeklyRiskTest, FiftyNineCleanWeeksMeetFivePercentAndOneEventFailsIt) {
  EXPECT_EQ(CleanWeeksNeeded(0.05, 0.95), 59);
  EXPECT_LE(WeeklyRiskUpperBound(0, 59, 0.95), 0.05);
  EXPECT_GT(WeeklyRiskUpperBound(0, 58, 0.95), 0.05);
  EXPECT_GT(WeeklyRiskUpperBound(1, 59, 0.95), 0.05);
  EXPECT_EQ(CleanWeeksNeeded(0.01, 0.95), 299);
  EXPECT_EQ(CleanWeeksNeeded(0.05, 0.99), 90);
}

TEST(WeeklyRiskTest, TargetsOutsideTheirRangesAreRefusedByKey) {
  EXPECT_TRUE(ValidateRiskTarget(0.05, 0.95).has_value());
  for (double risk : {0.0, 1.0, -0.1, 1.5}) {
    auto st = ValidateRiskTarget(risk, 0.95);
    ASSERT_FALSE(st.has_value()) << risk;
    EXPECT_NE(st.error().message().find("plan.max_weekly_risk"), std::string::npos);
  }
  for (double confidence : {0.5, 1.0, 0.2}) {
    auto st = ValidateRiskTarget(0.05, confidence);
    ASSERT_FALSE(st.has_value()) << confidence;
    EXPECT_NE(st.error().message().find("plan.confidence"), std::string::npos);
  }
}

// A plan's risk per count is bounded from its unseen weeks only: the planning week's brake at 51
// counts among its weeks but not toward the bound.
TEST(WeeklyRiskTest, PlanRiskBoundsEachCountFromItsUnseenWeeksOnly) {
  CapacityPlan plan;
  plan.planning_weeks = 1;
  plan.validation_weeks = 3;
  plan.confidence = 0.95;
  PolicyPlan polca;
  polca.policy = "polca";
  plan.policies.push_back(polca);
  const auto run = [&plan](int servers, int week, int brakes) {
    RunSummary r;
    r.policy = "polca";
    r.servers = servers;
    r.week = week;
    r.brake_events = brakes;
    plan.runs.push_back(r);
  };
  for (int week : {1, 2, 3}) run(50, week, 0);
  run(51, 0, 1);
  run(51, 1, 0);
  run(51, 2, 1);
  const std::vector<CountRisk> risk = PlanRisk(plan);
  ASSERT_EQ(risk.size(), 2u);
  EXPECT_EQ(risk[0].servers, 50);
  EXPECT_EQ(risk[0].unseen_weeks, 3);
  EXPECT_EQ(risk[0].unseen_weeks_with_power_event, 0);
  EXPECT_NEAR(risk[0].unseen_risk_upper, 0.6316, 1e-4);  // 1 - 0.05^(1/3)
  EXPECT_EQ(risk[1].weeks, 3);
  EXPECT_EQ(risk[1].weeks_with_power_event, 2);
  EXPECT_EQ(risk[1].unseen_weeks, 2);
  EXPECT_EQ(risk[1].unseen_weeks_with_power_event, 1);
  EXPECT_NEAR(risk[1].unseen_risk_upper, 0.9747, 1e-4);  // 1 in 2: sqrt(1 - 0.05)
}

}  // namespace
}  // namespace headroom::sim
