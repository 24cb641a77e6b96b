#include "sim/demand_response.h"

#include <gtest/gtest.h>

namespace headroom::sim {
namespace {

TEST(ShedSpecTest, ReadsSharesDurationsAndTheTimeToComply) {
  auto d = ParseShed("25%:3h");
  ASSERT_TRUE(d.has_value()) << d.error().message();
  EXPECT_DOUBLE_EQ(d->shed, 0.25);
  EXPECT_EQ(d->length, std::chrono::hours(3));
  EXPECT_EQ(d->comply_within, std::chrono::seconds(60));
  d = ParseShed("30%:90m:30s");
  ASSERT_TRUE(d.has_value()) << d.error().message();
  EXPECT_EQ(d->length, std::chrono::minutes(90));
  EXPECT_EQ(d->comply_within, std::chrono::seconds(30));
}

TEST(ShedSpecTest, RefusesWhatCannotBeAskedNamingTheFlag) {
  for (const auto& [spec, why] :
       std::vector<std::pair<std::string, std::string>>{{"25%", "two or three fields"},
                                                        {"0%:3h", "not in (0%, 100%)"},
                                                        {"100%:3h", "not in (0%, 100%)"},
                                                        {"12.5%:3h", "whole percent"},
                                                        {"25%:0s", "not in (0, 24h]"},
                                                        {"25%:25h", "not in (0, 24h]"},
                                                        {"25%:1m:2m", "shorter than the event"},
                                                        {"25%:3h:soon", "soon"},
                                                        {"a lot:3h", "a lot"}}) {
    const auto d = ParseShed(spec);
    ASSERT_FALSE(d.has_value()) << spec;
    EXPECT_NE(d.error().message().find("--shed '" + spec + "'"), std::string::npos)
        << d.error().message();
    EXPECT_NE(d.error().message().find(why), std::string::npos) << d.error().message();
  }
}

}  // namespace
}  // namespace headroom::sim
