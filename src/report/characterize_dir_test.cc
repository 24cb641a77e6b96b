#include "report/characterize_dir.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "core/files.h"
#include "core/testing/fresh_dir.h"

namespace headroom::report {
namespace {

sim::SimulatedSweep TwoSettingSweep() {
  sim::SimulatedSweep sweep;
  sim::Row row;
  row.shape = {.tp = 4, .batch = 8, .prompt = 512, .output = 64};
  row.peak_power_w = 400;
  sweep.rows.push_back(row);
  row.setting = {.kind = sim::Setting::Kind::kClockLock, .value = 1260};
  row.peak_power_w = 350;
  sweep.rows.push_back(row);
  sweep.summary = {{.label = "default"},
                   {.label = "sm_clock=1260MHz",
                    .worst_slowdown = 0.04,
                    .peak_change = -0.125,
                    .energy_change = -0.0625}};
  sweep.best = 1;
  sweep.traces = {{.label = "default", .power = {{0, 300}, {0.01, 310}}}};
  return sweep;
}

// Issue 46: summary.json's writer and reader share one field table. Every member is set by name
// to its own value and compared by name after the round trip, so an entry dropped from the table
// fails this test.
TEST(CharacterizeDirTest, EveryFieldReadsBack) {
  const CharacterizeInputs inputs{.workload = "inference",
                                  .model = "llama2-70b",
                                  .gpu = "a100-80gb-sxm",
                                  .engine = "vllm-server 0.6",
                                  .tp = 4,
                                  .prompts = "512",
                                  .batches = "8",
                                  .output = 64,
                                  .iterations = 3,
                                  .interval = "10ms",
                                  .slo_fraction = 0.05,
                                  .version = "9.9.9"};
  const sim::SimulatedSweep sweep = TwoSettingSweep();
  const std::string dir = core::testing::FreshDir("every_field");
  ASSERT_TRUE(WriteCharacterizeDir(dir, sweep, CharacterizeSummaryJson(inputs, sweep), true));
  auto read = ReadCharacterizeDir(dir);
  ASSERT_TRUE(read) << read.error().message();
  const CharacterizeInputs& in = read->inputs;
  EXPECT_EQ(in.workload, inputs.workload);
  EXPECT_EQ(in.model, inputs.model);
  EXPECT_EQ(in.gpu, inputs.gpu);
  EXPECT_EQ(in.engine, inputs.engine);
  EXPECT_EQ(in.tp, inputs.tp);
  EXPECT_EQ(in.prompts, inputs.prompts);
  EXPECT_EQ(in.batches, inputs.batches);
  EXPECT_EQ(in.output, inputs.output);
  EXPECT_EQ(in.iterations, inputs.iterations);
  EXPECT_EQ(in.interval, inputs.interval);
  EXPECT_EQ(in.slo_fraction, inputs.slo_fraction);
  EXPECT_EQ(in.version, inputs.version);
  ASSERT_EQ(read->settings.size(), 2u);
  const SettingVerdict& s = read->settings[1];
  EXPECT_EQ(s.setting, "sm_clock=1260MHz");
  EXPECT_EQ(s.worst_latency_increase, 0.04);
  EXPECT_EQ(s.peak_power_change, -0.125);
  EXPECT_EQ(s.energy_change, -0.0625);
  EXPECT_EQ(read->best, "sm_clock=1260MHz");
  // From the CSV files.
  ASSERT_EQ(read->points.size(), 2u);
  EXPECT_EQ(read->points[1].knob, SweptKnob::kClockLock);
  EXPECT_EQ(read->shape, "TP 4, batch 8, prompt 512, output 64");
  ASSERT_EQ(read->traces.size(), 1u);
  EXPECT_EQ(read->traces[0].power.size(), 2u);
}

TEST(CharacterizeDirTest, NoBestAndNoEngineReadBackAsNone) {
  sim::SimulatedSweep sweep = TwoSettingSweep();
  sweep.best.reset();
  const CharacterizeInputs inputs{.workload = "inference", .model = "m", .gpu = "g"};
  const nlohmann::ordered_json summary = CharacterizeSummaryJson(inputs, sweep);
  EXPECT_FALSE(summary.contains("engine"));  // written only when named
  EXPECT_TRUE(summary["best_under_slo"].is_null());
  const std::string dir = core::testing::FreshDir("no_best");
  ASSERT_TRUE(WriteCharacterizeDir(dir, sweep, summary, true));
  auto read = ReadCharacterizeDir(dir);
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(read->inputs.engine, "");
  EXPECT_FALSE(read->best);
}

}  // namespace
}  // namespace headroom::report
