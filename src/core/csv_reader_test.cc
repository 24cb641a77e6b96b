#include "core/csv_reader.h"

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <sys/stat.h>

#include "core/testing/fresh_dir.h"

namespace headroom::core {
namespace {

// The sum of column 'w' of `csv`, or the reader's error message.
std::string SumOfW(const std::string& path) {
  double sum = 0;
  auto read = ReadCsv(path, {"t", "w"}, [&](const CsvRow& row) -> core::Status {
    HEADROOM_ASSIGN_OR_RETURN(double w, row.Number(1));
    sum += w;
    return core::Ok();
  });
  return read ? std::to_string(sum) : read.error().message();
}

// Issue 44, finding 9: a cell that is not a finite number names the file, the line and the
// column.
TEST(CsvReaderTest, NanAndInfinityAreNotNumbers) {
  const std::string dir = testing::FreshDir("nan");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/power.csv";
  std::ofstream(path) << "t,w\n0,1.5\n1,2.5\n";
  EXPECT_EQ(SumOfW(path), "4.000000");
  for (const std::string cell : {"nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e999"}) {
    std::ofstream(path) << "t,w\n0,1.5\n\n1," << cell << "\n";
    EXPECT_EQ(SumOfW(path), path + ":4: column 'w': '" + cell + "' is not a number");
  }
}

// Issue 44, finding 8: a FIFO in a result directory hung the reader.
TEST(CsvReaderTest, AFifoIsRefusedAtOnce) {
  const std::string dir = testing::FreshDir("fifo");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/power.csv";
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  EXPECT_EQ(SumOfW(path), path + ": not a regular file (a FIFO)");
}

TEST(CsvReaderTest, ALastLineWithoutNewlineIsRead) {
  const std::string dir = testing::FreshDir("last");
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/power.csv";
  std::ofstream(path) << "t,w\r\n0,1.5\r\n1,2";
  EXPECT_EQ(SumOfW(path), "3.500000");
}

// The cells of `columns` in every row of `text`, "|"-separated with "," between rows, or the
// reader's error message.
std::string Cells(const std::string& text, const std::vector<CsvColumn>& columns) {
  std::string out;
  auto read = ParseCsv(text, "t.csv", columns, [&](const CsvRow& row) -> Status {
    if (!out.empty()) out += ",";
    for (std::size_t c = 0; c < columns.size(); ++c) {
      out += (c > 0 ? "|" : "") + std::string(row.Text(c));
    }
    return Ok();
  });
  return read ? out : read.error().message();
}

// Issue 46: one reader for every CSV headroom reads but request traces.
TEST(CsvReaderTest, ColumnsAreFoundByNameInAnyOrder) {
  EXPECT_EQ(Cells("a,b,c\n1,2,3\n4,5,6\n", {"c", "a"}), "3|1,6|4");
  EXPECT_EQ(Cells(" a , b \r\n 1 , 2 \r\n", {"b"}), "2");
  EXPECT_EQ(Cells("a,b\n1,2\n", {"c"}), "t.csv:1: no column 'c' in the header");
  EXPECT_EQ(Cells("a,b,a\n1,2,3\n", {"a"}), "t.csv:1: column 'a' appears more than once");
  EXPECT_EQ(Cells("a,b,a\n1,2,3\n", {"b"}), "2");  // a name not asked for may repeat
  EXPECT_EQ(Cells("", {"a"}), "t.csv:1: no header line");
  EXPECT_EQ(Cells("a,b\n1,2\n3\n", {"a"}), "t.csv:3: expected 2 fields, found 1");
}

TEST(CsvReaderTest, AnOptionalColumnMayBeMissing) {
  bool has = true;
  auto read = ParseCsv("a\n1\n", "t.csv", {"a", CsvColumn::Optional("power_w")},
                       [&](const CsvRow& row) -> Status {
                         has = row.Has("power_w");
                         EXPECT_EQ(row.Text("power_w"), "");
                         EXPECT_TRUE(row.Has(0));
                         return Ok();
                       });
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_FALSE(has);
  EXPECT_EQ(Cells("a,power_w\n1,2\n", {"a", CsvColumn::Optional("power_w")}), "1|2");
}

TEST(CsvReaderTest, QuotedCellsMayHoldCommasAndQuotes) {
  EXPECT_EQ(Cells("layout,n\n\"3g@0,3g@4\",2\n", {"layout", "n"}), "3g@0,3g@4|2");
  EXPECT_EQ(Cells("a,b\n\"say \"\"hi\"\"\" , \"\"\n", {"a", "b"}), "say \"hi\"|");
  EXPECT_EQ(Cells("a,b\n\"1,2\n", {"a"}), "t.csv:2: cell 1: the double quote is not closed");
  EXPECT_EQ(Cells("a,b\n1,\"2\"x\n", {"a"}),
            "t.csv:2: cell 2: text after the closing double quote (expected a comma)");
}

TEST(CsvReaderTest, ErrorsNameTheFileLineAndColumn) {
  auto read =
      ParseCsv("n,w\nx,2147483648\n", "t.csv", {"n", "w"}, [&](const CsvRow& row) -> Status {
        EXPECT_EQ(row.where(), "t.csv:2");
        EXPECT_EQ(row.NotA("n", "a name").message(), "t.csv:2: column 'n': 'x' is not a name");
        auto w = row.Integer("w");
        if (!w) return Fail(w.error());
        return Ok();
      });
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message(),
            "t.csv:2: column 'w': '2147483648' is not a whole number in int's range");
}

}  // namespace
}  // namespace headroom::core
