#include "core/parse.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace headroom::core {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(TrimTest, DropsWhatTheCLocaleCallsSpaceAndNothingElse) {
  for (int c = 0; c < 256; ++c) {
    const char ch = static_cast<char>(c);
    const std::string text = std::string(1, ch) + "x" + std::string(1, ch);
    const bool space = std::isspace(c) != 0;
    EXPECT_EQ(Trim(text), space ? std::string_view("x") : std::string_view(text)) << "byte " << c;
  }
  EXPECT_EQ(Trim(" \t\r\n\v\f"), "");
  EXPECT_EQ(Trim(" a b\r\n"), "a b");
}

TEST(ParseDurationTest, AcceptsUnits) {
  EXPECT_EQ(*ParseDuration("100ms"), milliseconds(100));
  EXPECT_EQ(*ParseDuration("10s"), seconds(10));
  EXPECT_EQ(*ParseDuration("1.5s"), milliseconds(1500));
  EXPECT_EQ(*ParseDuration("2m"), seconds(120));
  EXPECT_EQ(*ParseDuration("1h"), seconds(3600));
  EXPECT_EQ(*ParseDuration("250us"), std::chrono::microseconds(250));
  EXPECT_EQ(*ParseDuration(" 7d "), seconds(7 * 86400));
}

TEST(ParseDurationTest, RejectsBareNumbersAndJunkWithTheText) {
  for (const char* bad : {"10", "", "ms", "-1s", "1x", "s10", "1.2.3s", "nan s"}) {
    auto r = ParseDuration(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_EQ(r.error().code(), Code::kInvalidArgument);
    EXPECT_NE(r.error().message().find(std::string("'") + bad + "'"), std::string::npos)
        << r.error().message();
  }
}

TEST(ParseDurationTest, FormatRoundTrips) {
  for (const char* text : {"100ms", "10s", "2m", "1h", "250us", "1500ms"}) {
    EXPECT_EQ(*ParseDuration(FormatDuration(*ParseDuration(text))), *ParseDuration(text));
  }
  EXPECT_EQ(FormatDuration(milliseconds(100)), "100ms");
  EXPECT_EQ(FormatDuration(seconds(120)), "2m");
}

// Durations are whole nanoseconds in int64: read exactly, never wrapped.
TEST(ParseDurationTest, ExactToTheNanosecondAndBoundedByInt64) {
  EXPECT_EQ(ParseDuration("3740000000000000ns")->count(), 3'740'000'000'000'000LL);
  EXPECT_EQ(ParseDuration("9223372036854775807ns")->count(), 9'223'372'036'854'775'807LL);
  EXPECT_EQ(ParseDuration("1.000000001s")->count(), 1'000'000'001LL);
  EXPECT_EQ(ParseDuration("0.0000000005s")->count(), 1);  // half a nanosecond rounds up
  EXPECT_EQ(ParseDuration("106751d")->count(), 106'751LL * 86'400'000'000'000LL);
  EXPECT_EQ(ParseDuration("1e3ms")->count(), 1'000'000'000LL);
  for (const char* big : {"9223372036854775808ns", "106752d", "36000000000d", "1e300s", "9.3e18ns",
                          "99999999999999999999999s"}) {
    EXPECT_FALSE(ParseDuration(big)) << big;
  }
  // Every duration FormatDuration writes reads back the same.
  for (long long ns : {1LL, 999LL, 1'500'000LL, 3'740'000'000'000'001LL, 86'400'000'000'000LL * 3,
                       9'223'372'036'854'775'807LL}) {
    EXPECT_EQ(ParseDuration(FormatDuration(Duration(ns)))->count(), ns)
        << FormatDuration(Duration(ns));
  }
}

TEST(ParseNumberTest, Strict) {
  EXPECT_DOUBLE_EQ(*ParseDouble("1.25"), 1.25);
  EXPECT_FALSE(ParseDouble("1.25W"));
  EXPECT_FALSE(ParseDouble(""));
  EXPECT_EQ(*ParseInteger("42"), 42);
  EXPECT_FALSE(ParseInteger("4.2"));
  EXPECT_FALSE(ParseInteger("eight"));
}

TEST(ParseCountListTest, PositiveWholeNumbersOnly) {
  EXPECT_EQ(*ParseCountList("1,8,64"), (std::vector<int>{1, 8, 64}));
  EXPECT_EQ(*ParseCountList("1:3:1"), (std::vector<int>{1, 2, 3}));
  EXPECT_FALSE(ParseCountList("0"));
  EXPECT_FALSE(ParseCountList("1.5"));
  EXPECT_FALSE(ParseCountList("1e12"));
  EXPECT_EQ(ParseCountList("2,-1").error().message(), "-1 is not a positive whole number");
}

TEST(ParsePercentTest, WithOrWithoutTheSign) {
  EXPECT_DOUBLE_EQ(*ParsePercent("30%"), 30);
  EXPECT_DOUBLE_EQ(*ParsePercent(" 7.5 % "), 7.5);
  EXPECT_DOUBLE_EQ(*ParsePercent("5"), 5);
  EXPECT_FALSE(ParsePercent("%"));
  EXPECT_FALSE(ParsePercent("30%%"));
  EXPECT_FALSE(ParsePercent("x%"));
}

TEST(ParseValueListTest, RangesAndLists) {
  EXPECT_EQ(*ParseValueList("1110:1410:75"), (std::vector<double>{1110, 1185, 1260, 1335, 1410}));
  EXPECT_EQ(*ParseValueList("250,300,400"), (std::vector<double>{250, 300, 400}));
  EXPECT_EQ(*ParseValueList("400"), (std::vector<double>{400}));
  EXPECT_FALSE(ParseValueList("1410:1110:75"));
  EXPECT_FALSE(ParseValueList("1:2"));
  EXPECT_FALSE(ParseValueList("1:10:0"));
  EXPECT_FALSE(ParseValueList("250,x"));
}

// A step below the start's precision used to leave x where it was and loop until memory ran out.
TEST(ParseValueListTest, StepsTooSmallToMoveTheValueEnd) {
  EXPECT_EQ(*ParseValueList("1e20:1e20:1"), (std::vector<double>{1e20}));
  EXPECT_EQ(*ParseValueList("1100:1100:1e-300"), (std::vector<double>{1100}));
  EXPECT_FALSE(ParseValueList("1100:1101:1e-300"));  // too many values
  EXPECT_EQ(ParseValueList("0:1:0.1")->size(), 11u);
}

}  // namespace
}  // namespace headroom::core

namespace headroom::core {
namespace {

TEST(SplitIntoTest, FillsWhatFitsAndCountsEveryField) {
  std::array<std::string_view, 3> f;
  EXPECT_EQ(SplitInto("a,,c", ',', f), 3u);
  EXPECT_EQ(f[0], "a");
  EXPECT_EQ(f[1], "");
  EXPECT_EQ(f[2], "c");
  EXPECT_EQ(SplitInto("1,2,3,4,5", ',', f), 5u);
  EXPECT_EQ(f[2], "3");
  EXPECT_EQ(SplitInto("", ',', f), 1u);
  EXPECT_EQ(f[0], "");
  for (std::string_view text : {"x", "x,y", ",", "a,b,c,d", "2023-11-16 18:17:03,12,3"}) {
    const std::vector<std::string_view> all = Split(text, ',');
    std::array<std::string_view, 2> two;
    ASSERT_EQ(SplitInto(text, ',', two), all.size()) << text;
    for (std::size_t i = 0; i < std::min<std::size_t>(2, all.size()); ++i)
      EXPECT_EQ(two[i], all[i]);
  }
}

}  // namespace
}  // namespace headroom::core
