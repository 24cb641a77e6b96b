#include "telemetry/measured_run.h"

#include <mutex>

#include <gtest/gtest.h>

#include "catalog/testing/embedded_catalogs.h"
#include "gpu/sim/sim_device.h"
#include "telemetry/marker_channel.h"

namespace headroom::telemetry {
namespace {

using catalog::testing::A100;

gpu::sim::SimOptions Decoding() {
  gpu::sim::SimOptions o;
  o.script = *gpu::sim::LoadScript::Parse("decode");
  return o;
}

TEST(MarkerChannelTest, AppliesPhaseAndWorkLinesAndNamesWhatIsWrongWithOthers) {
  std::vector<std::string> phases;
  double work = 0;
  const MarkerChannel::Handlers h{.phase = [&](const std::string& p) { phases.push_back(p); },
                                  .work = [&](double units) { work += units; }};
  EXPECT_EQ(MarkerChannel::Apply("  phase prefill \r", h), "");
  EXPECT_EQ(MarkerChannel::Apply("work 2.5", h), "");
  EXPECT_EQ(MarkerChannel::Apply("", h), "");
  EXPECT_EQ(MarkerChannel::Apply("phase \t", h), "marker 'phase' needs a name");
  EXPECT_EQ(MarkerChannel::Apply("work -1", h), "marker 'work -1': work needs a number >= 0");
  EXPECT_EQ(MarkerChannel::Apply("tokens 5", h),
            "unknown marker 'tokens 5' (expected 'phase NAME' or 'work N')");
  EXPECT_EQ(phases, std::vector<std::string>{"prefill"});
  EXPECT_DOUBLE_EQ(work, 2.5);
}

TEST(MeasuredRunTest, CountsMarkersAndOutputWorkAndReportsBadMarkersWithoutStopping) {
  core::SystemClock clock;
  gpu::sim::SimDevice device(0, A100(), &clock, Decoding());
  std::mutex mu;
  std::vector<std::string> phases, warnings;
  auto run = RunMeasured({&device}, &clock,
                         {.command = {"sh", "-c",
                                      "echo 'phase load' > \"$HEADROOM_MARKERS\"; echo 'work 5' > "
                                      "\"$HEADROOM_MARKERS\"; echo bogus > \"$HEADROOM_MARKERS\"; "
                                      "echo 'generated 7 tokens'; sleep 0.3; exit 3"},
                          .interval = std::chrono::milliseconds(20),
                          .work_pattern = std::regex(R"(generated (\d+) tokens)"),
                          .on_phase =
                              [&](const std::string& p) {
                                std::lock_guard<std::mutex> lock(mu);
                                phases.push_back(p);
                              },
                          .on_warning =
                              [&](const std::string& w) {
                                std::lock_guard<std::mutex> lock(mu);
                                warnings.push_back(w);
                              }});
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->exit_code, 3);
  EXPECT_GE(run->duration_s, 0.3);
  EXPECT_DOUBLE_EQ(run->sampler->work(), 12);
  EXPECT_EQ(phases, std::vector<std::string>{"load"});
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("unknown marker 'bogus'"), std::string::npos);
  ASSERT_EQ(run->sampler->Reports().size(), 1u);
  EXPECT_GT(run->sampler->Reports()[0].energy.value(), 0);
}

TEST(MeasuredRunTest, AProgramThatCannotStartIsNotFound) {
  core::SystemClock clock;
  gpu::sim::SimDevice device(0, A100(), &clock, Decoding());
  auto run = RunMeasured({&device}, &clock, {.command = {"/nonexistent/headroom-test-program"}});
  ASSERT_FALSE(run);
  EXPECT_EQ(run.error().code(), core::Code::kNotFound) << run.error().message();
}

}  // namespace
}  // namespace headroom::telemetry
