#include <gtest/gtest.h>

#include "console/terminal.h"

namespace headroom::console {
namespace {

TEST(ParseColorModeTest, TheThreeValuesOfColor) {
  EXPECT_EQ(*ParseColorMode("auto"), ColorMode::kAuto);
  EXPECT_EQ(*ParseColorMode("always"), ColorMode::kAlways);
  EXPECT_EQ(*ParseColorMode("never"), ColorMode::kNever);
  EXPECT_FALSE(ParseColorMode("yes"));
}

// https://no-color.org: NO_COLOR set and non-empty turns colour off unless a flag asks for it;
// CI output and pipes get none either.
TEST(ColorWantedTest, TerminalsOnlyUnlessToldAndNoColorIsHonoured) {
  EXPECT_TRUE(ColorWanted(ColorMode::kAuto, true, nullptr, nullptr));
  EXPECT_FALSE(ColorWanted(ColorMode::kAuto, false, nullptr, nullptr));
  EXPECT_FALSE(ColorWanted(ColorMode::kAuto, true, "1", nullptr));
  EXPECT_TRUE(ColorWanted(ColorMode::kAuto, true, "", nullptr)) << "empty NO_COLOR is unset";
  EXPECT_FALSE(ColorWanted(ColorMode::kAuto, true, nullptr, "true"));
  EXPECT_TRUE(ColorWanted(ColorMode::kAlways, false, "1", "true"));
  EXPECT_FALSE(ColorWanted(ColorMode::kNever, true, nullptr, nullptr));
}

TEST(LogLevelTest, VerboseDebugsAndQuietKeepsWarnings) {
  ConfigureTerminal({.quiet = true});
  EXPECT_EQ(LogLevel(spdlog::level::info), spdlog::level::warn);
  EXPECT_EQ(LogLevel(spdlog::level::err), spdlog::level::err);
  EXPECT_TRUE(Quiet());
  ConfigureTerminal({.verbose = true});
  EXPECT_EQ(LogLevel(spdlog::level::info), spdlog::level::debug);
  ConfigureTerminal({});
  EXPECT_EQ(LogLevel(spdlog::level::info), spdlog::level::info);
  EXPECT_FALSE(Quiet());
}

}  // namespace
}  // namespace headroom::console
