#include "report/mig_profiles_report.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace headroom::report {
namespace {

gpu::MigProfileInfo ProfilesReportDriver() {
  return {.nvml_profile = 0x2,
          .id = 9,
          .name = "MIG 3g.40gb",
          .slices = 3,
          .max_instances = 2,
          .sm_count = 43,
          .memory_bytes = 40ULL << 30,
          .copy_engines = 3,
          .placements = {{.start = 0, .size = 4}, {.start = 4, .size = 4}}};
}

mig::GiProfile ProfilesReportCatalog() {
  mig::GiProfile p;
  p.name = "3g.40gb";
  p.nvml_value = 0x2;
  p.id = 9;
  p.compute_slices = 3;
  p.memory_slices = 4;
  p.sm_count = 42;
  p.memory_gib = 40;
  p.engines.copy = 3;
  p.max_instances = 2;
  p.starts = {0, 4};
  return p;
}

gpu::GpuMigProfileCheck ProfilesReportCheck(int index, bool differ) {
  gpu::MigProfileComparison row{
      .name = "3g.40gb", .driver = ProfilesReportDriver(), .catalog = ProfilesReportCatalog()};
  if (!differ) row.driver->sm_count = 42;
  if (differ) row.differences = {"SMs 43 vs catalog 42"};
  gpu::DeviceInfo info;
  info.index = index;
  info.name = "NVIDIA A100-SXM4-80GB";
  info.uuid = "GPU-x";
  return {.info = info, .mode = gpu::MigModeState{}, .catalog = "a100-80gb-sxm", .rows = {row}};
}

TEST(MigProfilesReportTest, ADifferingCellShowsBothSidesAndTheVerdictIsRed) {
  const std::string text =
      MigProfileCheckText(ProfilesReportCheck(0, true), format::TextStyle(true));
  EXPECT_TRUE(text.starts_with(
      "GPU 0 (NVIDIA A100-SXM4-80GB): MIG disabled; driver's profiles vs catalog a100-80gb-sxm\n"))
      << text;
  EXPECT_NE(text.find("43 vs 42"), std::string::npos) << text;
  EXPECT_NE(text.find("0:4,4:4"), std::string::npos) << text;
  EXPECT_NE(text.find("\x1b[31mSMs 43 vs catalog 42"), std::string::npos) << text;
  const std::string agree =
      MigProfileCheckText(ProfilesReportCheck(0, false), format::TextStyle(true));
  EXPECT_EQ(agree.find(" vs ", agree.find('\n')), std::string::npos) << agree;
}

TEST(MigProfilesReportTest, AGpuWithoutCatalogEntrySaysWhy) {
  gpu::GpuMigProfileCheck check = ProfilesReportCheck(0, true);
  check.catalog.reset();
  check.mode.reset();
  check.no_catalog_reason = "GPU 0: not in the catalog";
  const std::string text = MigProfileCheckText(check, format::TextStyle());
  EXPECT_TRUE(
      text.starts_with("GPU 0 (NVIDIA A100-SXM4-80GB): MIG mode unknown; driver's "
                       "profiles vs catalog (none)\nno catalog entry: GPU 0: not in the "
                       "catalog\n"))
      << text;
  const auto j = MigProfileCheckJson(check);
  EXPECT_TRUE(j["catalog"].is_null());
  EXPECT_TRUE(j["gpu"]["mig"].is_null());
  EXPECT_EQ(j["match"], false);
}

TEST(MigProfilesReportTest, OneGpuIsAnObjectSeveralAnArray) {
  const auto one = MigProfileChecksJson({ProfilesReportCheck(0, false)});
  ASSERT_TRUE(one.is_object());
  EXPECT_EQ(one["match"], true);
  EXPECT_EQ(one["profiles"][0]["driver"]["engines"]["copy"], 3);
  EXPECT_EQ(one["profiles"][0]["catalog"]["placements"][1]["start"], 4);
  const auto two =
      MigProfileChecksJson({ProfilesReportCheck(0, false), ProfilesReportCheck(1, true)});
  ASSERT_TRUE(two.is_array());
  EXPECT_EQ(two.size(), 2u);
}

TEST(MigProfilesReportTest, TheSummaryCountsProfilesAndNamesTheDifferingOnes) {
  EXPECT_EQ(MigProfileCheckSummary({ProfilesReportCheck(0, false)}),
            "match: all 1 profiles agree with the catalog (1 GPU)\n");
  EXPECT_EQ(MigProfileCheckSummary({ProfilesReportCheck(0, false), ProfilesReportCheck(1, false)}),
            "match: all 2 profiles agree with the catalog (2 GPUs)\n");
  EXPECT_EQ(MigProfileCheckSummary({ProfilesReportCheck(0, false), ProfilesReportCheck(1, true)}),
            "MISMATCH: 1 of 2 profiles differ from the catalog: GPU 1 3g.40gb\n");
}

}  // namespace
}  // namespace headroom::report
