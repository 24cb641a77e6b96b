#include "sim/trace_writer.h"

#include <atomic>
#include <filesystem>
#include <vector>

#include <gtest/gtest.h>

#include "sim/named_traces.h"

namespace headroom::sim {
namespace {

std::vector<TraceRequest> Requests(int n) {
  std::vector<TraceRequest> out;
  for (int i = 0; i < n; ++i)
    out.push_back({.arrival_s = 0.5 * i, .prompt_tokens = 100 + i, .output_tokens = 10});
  return out;
}

std::string TempPath(const std::string& name) {
  return (std::filesystem::path(::testing::TempDir()) / name).string();
}

// What WriteTrace writes reads back as the requests it was given, and it says how many.
TEST(WriteTraceTest, WritesEveryRequestAndCommits) {
  const std::string path = TempPath("write_trace.csv");
  VectorSource source(Requests(kWriteTraceCheckEvery + 5));
  std::int64_t heard = 0;
  auto count = WriteTrace(source, path, std::chrono::hours(24 * 365 * 53),
                          {.progress = [&](std::int64_t written, double) { heard = written; }});
  ASSERT_TRUE(count) << count.error().message();
  EXPECT_EQ(*count, kWriteTraceCheckEvery + 5);
  EXPECT_EQ(heard, kWriteTraceCheckEvery);
  auto back = OpenTrace(path);
  ASSERT_TRUE(back) << back.error().message();
  std::int64_t read = 0;
  for (auto r = (*back)->Next(); r && *r; r = (*back)->Next()) {
    EXPECT_EQ((*r)->prompt_tokens, 100 + read);
    EXPECT_NEAR((*r)->arrival_s, 0.5 * static_cast<double>(read), 1e-6);
    ++read;
  }
  EXPECT_EQ(read, *count);
  std::filesystem::remove(path);
}

// Stopped, it writes nothing at all (not even a partial file) and says so.
TEST(WriteTraceTest, AStopLeavesNoFile) {
  const std::string path = TempPath("write_trace_stopped.csv");
  VectorSource source(Requests(kWriteTraceCheckEvery * 2));
  const std::atomic<bool> stop{true};
  auto count = WriteTrace(source, path, std::chrono::hours(24 * 365 * 53), {.stop = &stop});
  ASSERT_FALSE(count);
  EXPECT_EQ(count.error().code(), core::Code::kCancelled);
  EXPECT_NE(count.error().message().find(path + " not written"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

}  // namespace
}  // namespace headroom::sim
