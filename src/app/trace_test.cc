// trace synth below its flags: progress handed over as a fraction of the duration with the
// requests written so far, and a stop that leaves no file.
#include "app/trace.h"

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "core/testing/fresh_dir.h"

namespace headroom::app {
namespace {

TraceSynthRequest SynthOf(const std::string& out) {
  return {.from = "azure-code",
          .duration = "6h",
          .out = out,
          .start = DefaultSynthStart(),
          .burst_length = "2m",
          .params = {},
          .stop = nullptr,
          .progress = {}};
}

TEST(AppTraceSynthTest, ProgressIsAFractionOfTheDurationAndCountsTheRequestsWritten) {
  const std::string dir = core::testing::FreshDir("trace_synth_progress");
  std::filesystem::create_directories(dir);
  TraceSynthRequest request = SynthOf(dir + "/trace.csv");
  double last_fraction = 0;
  std::int64_t last_written = 0;
  int calls = 0;
  request.progress = [&](double fraction, std::int64_t written) {
    EXPECT_GE(fraction, last_fraction);
    EXPECT_LE(fraction, 1.0);
    EXPECT_GT(written, last_written);
    last_fraction = fraction;
    last_written = written;
    ++calls;
  };
  auto synth = SynthesizeTrace(request);
  ASSERT_TRUE(synth) << synth.error().message();
  EXPECT_EQ(synth->duration, std::chrono::hours(6));
  ASSERT_GT(calls, 0);
  EXPECT_GT(last_fraction, 0.5);
  EXPECT_LE(last_written, synth->requests);
  std::ifstream in(request.out);
  std::int64_t lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, synth->requests + 1);  // the header
}

TEST(AppTraceSynthTest, AStopLeavesNoFile) {
  const std::string dir = core::testing::FreshDir("trace_synth_stop");
  std::filesystem::create_directories(dir);
  const std::atomic<bool> stop{true};
  TraceSynthRequest request = SynthOf(dir + "/trace.csv");
  request.stop = &stop;
  auto synth = SynthesizeTrace(request);
  ASSERT_FALSE(synth);
  EXPECT_EQ(synth.error().code(), core::Code::kCancelled);
  EXPECT_FALSE(std::filesystem::exists(request.out));
}

TEST(AppTraceSynthTest, FlagErrorsNameTheFlag) {
  TraceSynthRequest request = SynthOf("trace.csv");
  request.duration = "400d";
  auto synth = SynthesizeTrace(request);
  ASSERT_FALSE(synth);
  EXPECT_EQ(synth.error().message(), "--duration 400d is longer than the limit of 366d");
}

}  // namespace
}  // namespace headroom::app
