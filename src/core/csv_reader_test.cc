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

}  // namespace
}  // namespace headroom::core
