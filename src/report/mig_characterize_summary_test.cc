#include "report/mig_characterize_summary.h"

#include <string>

#include <gtest/gtest.h>

namespace headroom::report {
namespace {

mig::LayoutResult SummaryResult(const std::string& workload, const std::string& layout,
                                double samples_per_s, double j_per_sample) {
  return {.layout = layout,
          .workload = workload,
          .gpu_samples_per_s = samples_per_s,
          .gpu_j_per_sample = j_per_sample};
}

MigCharacterizeReport SummaryReport() {
  MigCharacterizeReport r{.inputs = {.power_limit_w = 700,
                                     .geometry = {.gpu = "h200-141gb-sxm"},
                                     .workloads = {"a", "b"},
                                     .layouts = {"MIG off", "1g x7"}}};
  r.results = {SummaryResult("a", "MIG off", 100, 2), SummaryResult("a", "1g x7", 150, 1.5),
               SummaryResult("b", "MIG off", 0, 0), SummaryResult("b", "1g x7", 0, 0)};
  return r;
}

TEST(MigCharacterizeSummaryTest, TextSkipsWorkloadsThatDoNotRunWithMigOff) {
  const std::string text = MigCharacterizeSummaryText(SummaryReport(), format::TextStyle());
  EXPECT_TRUE(
      text.starts_with("MIG characterization on h200-141gb-sxm (simulated, power limit "
                       "700 W): 2 layouts x 2 workloads"))
      << text;
  EXPECT_NE(text.find("+50.0%"), std::string::npos) << text;
  EXPECT_EQ(text.find("\nb "), std::string::npos) << text;
}

TEST(MigCharacterizeSummaryTest, JsonListsEveryWorkloadWithNullWhereNothingRuns) {
  const auto j = MigCharacterizeSummaryJson(SummaryReport(), "out");
  EXPECT_EQ(j["results_csv"], "out/results.csv");
  EXPECT_EQ(j["workloads"][0]["fastest"]["layout"], "1g x7");
  EXPECT_TRUE(j["workloads"][1]["fastest"].is_null());
}

TEST(MigCharacterizeSummaryTest, ScalingPlotsHaveOneLinePerWorkload) {
  const std::vector<mig::EqualInstanceScaling> scaling = {
      {.workload = "a", .throughput = {{1, 1.0}, {7, 3.0}}, .energy = {{1, 1.0}, {7, 0.5}}}};
  const auto plots = MigScalingPlots("h200-141gb-sxm", scaling);
  ASSERT_EQ(plots.size(), 2u);
  EXPECT_EQ(plots[0].name, "mig-throughput");
  EXPECT_EQ(plots[1].series[0].points.back(), (std::pair<double, double>{7, 0.5}));
}

}  // namespace
}  // namespace headroom::report
