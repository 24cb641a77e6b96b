#include "report/table.h"

#include <gtest/gtest.h>

namespace headroom::report {
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

}  // namespace
}  // namespace headroom::report
