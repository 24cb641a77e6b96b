#include "core/parse.h"

#include <gtest/gtest.h>

namespace headroom::core {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

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

TEST(ParseNumberTest, Strict) {
  EXPECT_DOUBLE_EQ(*ParseDouble("1.25"), 1.25);
  EXPECT_FALSE(ParseDouble("1.25W"));
  EXPECT_FALSE(ParseDouble(""));
  EXPECT_EQ(*ParseInteger("42"), 42);
  EXPECT_FALSE(ParseInteger("4.2"));
  EXPECT_FALSE(ParseInteger("eight"));
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

}  // namespace
}  // namespace headroom::core
