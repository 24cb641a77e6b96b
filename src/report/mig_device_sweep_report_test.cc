#include "report/mig_device_sweep_report.h"

#include <string>

#include <gtest/gtest.h>

namespace headroom::report {
namespace {

mig::DeviceSweep TwoInstanceSweep() {
  mig::LayoutRun run{.layout = "3g.40gb@0,3g.40gb@4", .window_s = 2, .energy_j = 400};
  for (int start : {0, 4}) {
    run.instances.push_back({.layout = run.layout,
                             .slice = fmt::format("3g.40gb@{}", start),
                             .uuid = fmt::format("MIG-{}", start),
                             .sm_count = 42,
                             .exit_code = start == 0 ? 0 : 3,
                             .seconds = 1.5,
                             .energy_activity_j = 200,
                             .energy_sm_share_j = 200});
  }
  return {.idle_w = 60, .original_layout = "7g.80gb@0", .runs = {run}};
}

TEST(MigDeviceSweepReportTest, CsvHasOneRowPerInstanceAndJPerSampleOnlyWithSamples) {
  const std::string with = MigDeviceSweepCsv(TwoInstanceSweep(), 100.0);
  EXPECT_NE(with.find("\n\"3g.40gb@0,3g.40gb@4\",1,3g.40gb@4,MIG-4,42,3,1.500,2.000,400.0,200.0,"
                      "200.0,2\n"),
            std::string::npos)
      << with;
  const std::string without = MigDeviceSweepCsv(TwoInstanceSweep(), std::nullopt);
  EXPECT_NE(without.find(",200.0,200.0,\n"), std::string::npos) << without;
}

TEST(MigDeviceSweepReportTest, JsonAndTextNameTheGpuAndTheRestoredLayout) {
  const MigDeviceSweepContext context{.gpu_index = 2, .gpu = "a100-80gb-sxm", .backend = "sim"};
  const auto j = MigDeviceSweepJson(TwoInstanceSweep(), context);
  EXPECT_EQ(j["original_layout"], "7g.80gb@0");
  EXPECT_EQ(j["runs"][0]["instances"][1]["exit_code"], 3);
  const std::string text =
      MigDeviceSweepText(TwoInstanceSweep(), context, "out", format::TextStyle());
  EXPECT_TRUE(text.starts_with("MIG characterization of GPU 2 (a100-80gb-sxm): idle 60.0 W"))
      << text;
  EXPECT_NE(text.find("Original layout '7g.80gb@0' restored. Wrote out/results.csv\n"),
            std::string::npos)
      << text;
}

}  // namespace
}  // namespace headroom::report
