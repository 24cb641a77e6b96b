#include "policy/budget_schedule.h"

#include <gtest/gtest.h>

namespace headroom::policy {
namespace {

using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

core::Result<BudgetSchedule> Parse(const std::string& yaml, bool once_allowed = true) {
  auto doc = core::YamlReader::Parse(yaml, "row.yaml");
  if (!doc) return core::Fail(doc.error());
  auto items = doc->MapList("budget_schedule");
  if (!items) return core::Fail(items.error());
  return ParseBudgetSchedule(*items, once_allowed);
}

TEST(BudgetScheduleTest, ADailyWindowIsInForceEveryDayAcrossMidnight) {
  auto schedule = Parse(R"(budget_schedule:
  - {daily: "23:00", for: 3h, shed: 25%, comply_within: 30s, reason: night work}
)");
  ASSERT_TRUE(schedule) << schedule.error().message();
  const BudgetWindow& w = schedule->windows()[0];
  EXPECT_TRUE(w.daily);
  EXPECT_EQ(w.start, hours(23));
  EXPECT_DOUBLE_EQ(w.shed, 0.25);
  EXPECT_EQ(w.comply_within, seconds(30));
  EXPECT_FALSE(schedule->At(hours(22)));
  auto in = schedule->At(hours(23));
  ASSERT_TRUE(in);
  EXPECT_EQ(in->begins, hours(23));
  in = schedule->At(hours(24 * 5 + 1));
  ASSERT_TRUE(in) << "day 5, 01:00: the window of day 4";
  EXPECT_EQ(in->begins, hours(24 * 4 + 23));
  EXPECT_EQ(in->ends, hours(24 * 5 + 2));
  EXPECT_FALSE(schedule->At(hours(24 * 5 + 2))) << "its end is not in it";
  auto next = schedule->Next(hours(24 * 5 + 2));
  ASSERT_TRUE(next);
  EXPECT_EQ(next->begins, hours(24 * 5 + 23));
}

TEST(BudgetScheduleTest, AOneOffWindowIsInForceOnceWithItsDefaultTimeToComply) {
  auto schedule = Parse(R"(budget_schedule:
  - {at: 65h, for: 3h, shed: 30%, reason: grid emergency}
)");
  ASSERT_TRUE(schedule) << schedule.error().message();
  EXPECT_EQ(schedule->windows()[0].comply_within, seconds(60));
  EXPECT_FALSE(schedule->At(hours(64)));
  EXPECT_TRUE(schedule->At(hours(66)));
  EXPECT_FALSE(schedule->At(hours(68)));
  EXPECT_FALSE(schedule->Next(hours(65)));
  ASSERT_TRUE(schedule->Next(hours(1)));
  EXPECT_EQ(schedule->Next(hours(1))->begins, hours(65));
}

TEST(BudgetScheduleTest, OverlappingWindowsAreRejectedNamingBoth) {
  auto overlap = Parse(R"(budget_schedule:
  - {daily: "17:00", for: 3h, shed: 25%, reason: evening peak}
  - {at: 43h, for: 10m, shed: 30%, reason: emergency}
)");
  ASSERT_FALSE(overlap);
  EXPECT_NE(overlap.error().message().find("row.yaml:3"), std::string::npos)
      << overlap.error().message();
  EXPECT_NE(overlap.error().message().find("('emergency') overlaps budget window 1 ('evening "
                                           "peak')"),
            std::string::npos)
      << overlap.error().message();
  // Day 1 at 19:00 meets the daily 17:00-20:00; day 1 at 20:00 does not.
  EXPECT_TRUE(Parse(R"(budget_schedule:
  - {daily: "17:00", for: 3h, shed: 25%, reason: evening peak}
  - {at: 44h, for: 21h, shed: 30%, reason: emergency}
)"));
  EXPECT_FALSE(Parse(R"(budget_schedule:
  - {daily: "22:00", for: 3h, shed: 25%, reason: a}
  - {daily: "00:30", for: 1h, shed: 25%, reason: b}
)")) << "22:00 for 3h wraps past midnight to 01:00";
}

TEST(BudgetScheduleTest, BadWindowsGetOneErrorNamingTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{daily: \"17:00\", for: 3h, shed: 100%, reason: r}", "strictly between"},
      {"{daily: \"17:00\", for: 3h, shed: 0%, reason: r}", "strictly between"},
      {"{daily: \"17:00\", for: 3h, shed: -5%, reason: r}", "strictly between"},
      {"{daily: \"17:00\", for: 0s, shed: 20%, reason: r}", "length must be positive"},
      {"{daily: \"17:00\", for: 1d, shed: 20%, reason: r}", "shorter than a day"},
      {"{daily: \"24:00\", for: 1h, shed: 20%, reason: r}", "not a time of day"},
      {"{daily: \"5pm\", for: 1h, shed: 20%, reason: r}", "not a time of day"},
      {"{daily: \"17:00\", for: 1h, shed: 20%, comply_within: 0s, reason: r}",
       "comply_within must be positive"},
      {"{daily: \"17:00\", for: 1h, shed: 20%}", "reason"},
      {"{daily: \"17:00\", for: 1h, shed: 20%, reason: \" \"}", "must not be empty"},
      {"{daily: \"17:00\", at: 1h, for: 1h, shed: 20%, reason: r}", "one"},
      {"{for: 1h, shed: 20%, reason: r}", "one"},
      {"{daily: \"17:00\", for: 1h, shed: twenty, reason: r}", "shed"},
      {"{daily: \"17:00\", for: 1h, shed: 20%, reason: r, budget: 5}", "budget"},
  };
  for (const auto& [item, expected] : cases) {
    auto schedule = Parse("budget_schedule:\n  - " + item + "\n");
    ASSERT_FALSE(schedule) << item;
    EXPECT_NE(schedule.error().message().find(expected), std::string::npos)
        << item << ": " << schedule.error().message();
    EXPECT_NE(schedule.error().message().find("row.yaml"), std::string::npos)
        << schedule.error().message();
  }
  auto once = Parse("budget_schedule:\n  - {at: 1h, for: 1h, shed: 20%, reason: r}\n", false);
  ASSERT_FALSE(once);
  EXPECT_NE(once.error().message().find("PUT /v1/budget"), std::string::npos);
}

TEST(BudgetScheduleTest, TimesOfDayAreStrict) {
  EXPECT_EQ(*ParseTimeOfDay("07:30:15"), hours(7) + minutes(30) + seconds(15));
  EXPECT_EQ(*ParseTimeOfDay("00:00"), core::Duration::zero());
  for (const char* bad : {"7:30", "07:60", "07", "07:30:15:00", "ab:cd", ""}) {
    EXPECT_FALSE(ParseTimeOfDay(bad)) << bad;
  }
}

TEST(BudgetComplianceTest, ComplianceIsAMinuteUnderTheBudgetAndOverTimeCountsAfterTheDeadline) {
  BudgetCompliance c;
  // 1 s samples of a budget of 100 W with 30 s to comply, lasting 10 minutes.
  const auto meter = [&](double since_s, double w) { c.Meter(since_s, w, 1, 100, 30, 600); };
  for (int t = 1; t <= 20; ++t) meter(t, 120);
  meter(21, 90);  // one sample under it: noise
  for (int t = 22; t <= 40; ++t) meter(t, 110);
  EXPECT_FALSE(c.complied_after_s);
  EXPECT_DOUBLE_EQ(c.over_after_deadline_s, 10) << "samples ending after 30 s";
  EXPECT_DOUBLE_EQ(c.peak_after_deadline_w, 110);
  for (int t = 41; t <= 100; ++t) meter(t, 95);
  ASSERT_TRUE(c.complied_after_s);
  EXPECT_DOUBLE_EQ(*c.complied_after_s, 40) << "the start of the minute under it";
  meter(101, 130);
  EXPECT_DOUBLE_EQ(*c.complied_after_s, 40);
  EXPECT_DOUBLE_EQ(c.over_after_deadline_s, 11);
  EXPECT_DOUBLE_EQ(c.peak_after_deadline_w, 130);
  // A budget that ends within the minute: under it to its end is compliance.
  BudgetCompliance short_one;
  short_one.Meter(1, 90, 1, 100, 30, 2);
  EXPECT_FALSE(short_one.complied_after_s);
  short_one.Meter(2, 90, 1, 100, 30, 2);
  ASSERT_TRUE(short_one.complied_after_s);
  EXPECT_DOUBLE_EQ(*short_one.complied_after_s, 0);
}

}  // namespace
}  // namespace headroom::policy
