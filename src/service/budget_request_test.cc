#include "service/budget_request.h"

#include <cmath>

#include <gtest/gtest.h>

namespace headroom::service {
namespace {

using std::chrono::hours;
using std::chrono::seconds;

WallTime At(const char* text) { return *ParseUtcTime(text); }

TEST(BudgetRequestTest, AWholeRequestParsesAndPasses) {
  auto r = ParseBudgetRequest(
      R"({"budget_w": 195000, "duration": "3h", "reason": "DR event 4411",
          "effective_at": "2026-12-07T17:00:00Z", "comply_within": "30s"})");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_DOUBLE_EQ(r->budget.value(), 195000);
  EXPECT_EQ(r->duration, hours(3));
  EXPECT_EQ(r->comply_within, seconds(30));
  EXPECT_EQ(FormatUtcTime(*r->effective_at), "2026-12-07T17:00:00Z");
  EXPECT_TRUE(ValidateBudgetRequest(*r, {}, core::Watts(260000), At("2026-12-07T16:59:00Z"),
                                    At("2026-12-07T10:00:00Z")));
}

TEST(BudgetRequestTest, MalformedBodiesAreBadRequests) {
  for (const char* body : {
           "not json",
           "[]",
           R"({"duration": "3h", "reason": "r"})",
           R"({"budget_w": "195000", "duration": "3h", "reason": "r"})",
           R"({"budget_w": true, "duration": "3h", "reason": "r"})",
           R"({"budget_w": 195000, "reason": "r"})",
           R"({"budget_w": 195000, "duration": "3", "reason": "r"})",
           R"({"budget_w": 195000, "duration": "3h"})",
           R"({"budget_w": 195000, "duration": "3h", "reason": ""})",
           R"({"budget_w": 195000, "duration": "3h", "reason": "r", "value": 1})",
           R"({"budget_w": 195000, "duration": "3h", "reason": "r", "effective_at": "17:00"})",
           R"({"budget_w": 195000, "duration": "3h", "reason": "r",
               "effective_at": "2026-02-30T17:00:00Z"})",
       }) {
    auto r = ParseBudgetRequest(body);
    ASSERT_FALSE(r) << body;
    EXPECT_EQ(r.error().code(), core::Code::kInvalidArgument) << body;
  }
}

TEST(BudgetRequestTest, ValuesOutOfBoundsAreRefusedNamingWhy) {
  const WallTime now = At("2026-12-07T17:00:00Z");
  const GridLimits limits;  // 60 s between changes, 24 h at most
  const auto refused = [&](BudgetRequest r, std::optional<WallTime> last = std::nullopt) {
    const core::Status s = ValidateBudgetRequest(r, limits, core::Watts(260000), now, last);
    if (s) {
      ADD_FAILURE() << "accepted";
      return std::string();
    }
    EXPECT_EQ(s.error().code(), core::Code::kOutOfRange);
    return s.error().message();
  };
  const BudgetRequest good{.budget = core::Watts(195000), .duration = hours(3), .reason = "r"};
  EXPECT_TRUE(ValidateBudgetRequest(good, limits, core::Watts(260000), now, std::nullopt));
  BudgetRequest r = good;
  r.budget = core::Watts(std::nan(""));
  EXPECT_NE(refused(r).find("positive"), std::string::npos);
  r.budget = core::Watts(-5);
  EXPECT_NE(refused(r).find("positive"), std::string::npos);
  r.budget = core::Watts(0);
  EXPECT_NE(refused(r).find("positive"), std::string::npos);
  r.budget = core::Watts(270000);
  EXPECT_NE(refused(r).find("above the row's provisioned"), std::string::npos);
  r = good;
  r.effective_at = At("2026-12-07T16:59:00Z");
  EXPECT_NE(refused(r).find("in the past"), std::string::npos);
  r.effective_at = At("2026-12-07T16:59:57Z");  // within the clocks' skew
  EXPECT_TRUE(ValidateBudgetRequest(r, limits, core::Watts(260000), now, std::nullopt));
  r = good;
  r.duration = hours(25);
  EXPECT_NE(refused(r).find("at most 24h"), std::string::npos);
  r = good;
  r.comply_within = seconds(0);
  EXPECT_NE(refused(r).find("comply_within"), std::string::npos);
  EXPECT_NE(refused(good, At("2026-12-07T16:59:30Z")).find("at most once every 1m"),
            std::string::npos);
  EXPECT_TRUE(
      ValidateBudgetRequest(good, limits, core::Watts(260000), now, At("2026-12-07T16:59:00Z")));
}

TEST(BudgetRequestTest, UtcTimesAreStrict) {
  EXPECT_EQ(FormatUtcTime(At("2026-12-07T17:00:00.500Z")), "2026-12-07T17:00:00Z");
  EXPECT_EQ(At("1970-01-01T00:00:10Z").time_since_epoch(), seconds(10));
  for (const char* bad :
       {"2026-12-07 17:00:00Z", "2026-12-07T17:00:00", "2026-12-07T17:00:00+01:00",
        "2026-13-07T17:00:00Z", "2026-12-07T24:00:00Z", "2026-12-07T17:00:00.Z", ""}) {
    EXPECT_FALSE(ParseUtcTime(bad)) << bad;
  }
}

}  // namespace
}  // namespace headroom::service
