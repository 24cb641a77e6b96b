#include "policy/row_policy.h"

#include <gtest/gtest.h>

namespace headroom::policy {
namespace {

TEST(RowPolicyTest, PriorityNamesRoundTrip) {
  for (ServerPriority priority : {ServerPriority::kHigh, ServerPriority::kLow}) {
    auto parsed = ParsePriority(PriorityName(priority));
    ASSERT_TRUE(parsed.has_value());
    EXPECT_EQ(*parsed, priority);
  }
  EXPECT_EQ(PriorityName(ServerPriority::kHigh), "hp");
  EXPECT_EQ(*ParsePriority(" High "), ServerPriority::kHigh);
  EXPECT_EQ(*ParsePriority("LOW"), ServerPriority::kLow);
}

TEST(RowPolicyTest, UnknownPriorityIsInvalidArgument) {
  auto parsed = ParsePriority("medium");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code(), core::Code::kInvalidArgument);
  EXPECT_NE(parsed.error().message().find("medium"), std::string::npos);
}

TEST(RowPolicyTest, FractionIsRowPowerOverBudget) {
  Observation obs;
  obs.row_power = core::Watts(900);
  obs.budget = core::Watts(1000);
  EXPECT_DOUBLE_EQ(obs.Fraction(), 0.9);
}

}  // namespace
}  // namespace headroom::policy
