#include "format/text_style.h"

#include <gtest/gtest.h>

namespace headroom::format {
namespace {

TEST(TextStyleTest, PlainLeavesTextAlone) {
  const TextStyle plain;
  EXPECT_FALSE(plain.color());
  for (Tone tone : {Tone::kPlain, Tone::kBold, Tone::kRed, Tone::kYellow, Tone::kGreen}) {
    EXPECT_EQ(plain.Paint("fails", tone), "fails");
  }
}

TEST(TextStyleTest, ColorWrapsTextInAnEscapeAndAReset) {
  const TextStyle color(true);
  EXPECT_EQ(color.Red("fails"), "\x1b[31mfails\x1b[0m");
  EXPECT_EQ(color.Green("ok"), "\x1b[32mok\x1b[0m");
  EXPECT_EQ(color.Yellow("warning:"), "\x1b[33mwarning:\x1b[0m");
  EXPECT_EQ(color.Bold("POWER W"), "\x1b[1mPOWER W\x1b[0m");
  EXPECT_EQ(color.Paint("plain", Tone::kPlain), "plain");
}

TEST(TextStyleTest, StripAndWidthIgnoreEscapes) {
  const TextStyle color(true);
  const std::string painted = color.Bold("GPU") + " " + color.Red("fails on HP P99");
  EXPECT_EQ(StripStyle(painted), "GPU fails on HP P99");
  EXPECT_EQ(VisibleWidth(painted), 19u);
  // One column per UTF-8 code point: "±5 °C" is 5 columns in 7 bytes.
  EXPECT_EQ(VisibleWidth("\u00b15 \u00b0C"), 5u);
  // A cut-off escape at the end counts nothing.
  EXPECT_EQ(VisibleWidth("ab\x1b[3"), 2u);
}

}  // namespace
}  // namespace headroom::format
