#include "report/mig_workloads_report.h"

#include <string>

#include <gtest/gtest.h>

namespace headroom::report {
namespace {

mig::WorkloadsOnGpu WorkloadsReportSample() {
  mig::WorkloadsOnGpu s{.gpu = "a100-40gb-sxm", .smallest_instance = "1g.5gb"};
  s.workloads = {
      {.workload = "small",
       .batch = 32,
       .fit = {.host_s = 0.002, .per_sample_s = 0.0001, .compute_share = 0.8},
       .footprint_gib = 3.25,
       .whole_gpu_samples_per_s = 1234.56,
       .smallest_instance_samples_per_s = 200.04},
      {.workload = "big", .batch = 8, .footprint_gib = 60, .whole_gpu_samples_per_s = 10}};
  return s;
}

TEST(MigWorkloadsReportTest, TheTableNamesBothGpusAndTheSmallestInstance) {
  const std::string text =
      MigWorkloadsText(WorkloadsReportSample(), "h200-141gb-sxm", format::TextStyle());
  EXPECT_TRUE(
      text.starts_with("Training workloads measured on h200-141gb-sxm, modeled on "
                       "a100-40gb-sxm (docs/mig.md, \"The slice model\")\n"))
      << text;
  EXPECT_NE(text.find("1g.5gb_SAMPLES/S"), std::string::npos) << text;
  EXPECT_NE(text.find("1234.6"), std::string::npos) << text;
  EXPECT_NE(text.find("200.0"), std::string::npos) << text;
  EXPECT_NE(text.find("OOM"), std::string::npos) << text;
  EXPECT_NE(text.find("2.00"), std::string::npos) << text;  // host ms
}

TEST(MigWorkloadsReportTest, JsonIsNullWhereTheSmallestInstanceIsTooSmall) {
  const auto j = MigWorkloadsJson(WorkloadsReportSample(), "h200-141gb-sxm");
  EXPECT_EQ(j["gpu"], "a100-40gb-sxm");
  EXPECT_EQ(j["reference_gpu"], "h200-141gb-sxm");
  ASSERT_EQ(j["workloads"].size(), 2u);
  EXPECT_EQ(j["workloads"][0]["smallest_instance"], "1g.5gb");
  EXPECT_DOUBLE_EQ(j["workloads"][0]["smallest_instance_samples_per_s"].get<double>(), 200.04);
  EXPECT_TRUE(j["workloads"][1]["smallest_instance_samples_per_s"].is_null());
  EXPECT_EQ(j["workloads"][1]["batch"], 8);
}

}  // namespace
}  // namespace headroom::report
