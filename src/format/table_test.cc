#include "format/table.h"

#include <gtest/gtest.h>

namespace headroom::format {
namespace {

TEST(TextTableTest, AlignsNumbersRightAndTextLeft) {
  TextTable table({{"GPU"}, {"NAME", TextTable::Align::kLeft}, {"POWER W"}});
  table.AddRow({"0", "A100", "63"});
  table.AddRow({"10", "H100 80GB", "700"});
  EXPECT_EQ(table.Render(),
            "GPU  NAME       POWER W\n"
            "  0  A100            63\n"
            " 10  H100 80GB      700\n");
}

TEST(TextTableTest, ColouredCellsAndRowsAlignLikePlainOnes) {
  const TextStyle color(true);
  TextTable table(
      {{"POLICY", TextTable::Align::kLeft}, {"SERVERS"}, {"LIMIT", TextTable::Align::kLeft}});
  table.AddRow({"none", "40", color.Red("fails on peak")});
  table.AddRow({"polca", "52", "-"}, Tone::kGreen);
  const std::string coloured = table.Render(color);
  EXPECT_NE(coloured.find("\x1b[1mPOLICY\x1b[0m"), std::string::npos) << coloured;
  EXPECT_NE(coloured.find("\x1b[32mpolca\x1b[0m"), std::string::npos) << coloured;
  EXPECT_EQ(StripStyle(coloured),
            "POLICY  SERVERS  LIMIT\n"
            "none         40  fails on peak\n"
            "polca        52  -\n");
  // Without colour, the same table has no escape codes at all (the red cell was painted by a
  // colour TextStyle, so a plain table gets its cells from a plain TextStyle).
  TextTable plain({{"POLICY", TextTable::Align::kLeft}, {"SERVERS"}});
  plain.AddRow({"polca", "52"}, Tone::kGreen);
  EXPECT_EQ(plain.Render(), "POLICY  SERVERS\npolca        52\n");
}

}  // namespace
}  // namespace headroom::format
