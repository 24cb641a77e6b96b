#include "report/mig_catalog_report.h"

#include <gtest/gtest.h>

#include "catalog/testing/embedded_catalogs.h"
#include "mig/enumerate.h"

namespace headroom::report {
namespace {

using catalog::testing::MigGpu;

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(MigCatalogReportTest, ProfilesTableHasEveryProfile) {
  const mig::GpuMigSpec& spec = MigGpu("a100-80gb-sxm");
  const std::string text = MigProfilesText(spec, format::TextStyle{});
  EXPECT_TRUE(Contains(text, "MIG profiles of a100-80gb-sxm: 8 memory slices, 7 compute slices"))
      << text;
  for (const mig::GiProfile& p : spec.profiles) EXPECT_TRUE(Contains(text, p.name)) << p.name;
}

TEST(MigCatalogReportTest, ValidLayoutCountsTheSlicesItUses) {
  const mig::GpuMigSpec& spec = MigGpu("a100-80gb-sxm");
  auto layout = mig::ParseLayout("3g.40gb@0,2g.20gb@4,1g.10gb@6");
  ASSERT_TRUE(layout);
  EXPECT_EQ(ValidLayoutText(spec, *layout),
            "valid on a100-80gb-sxm: 3g.40gb@0,2g.20gb@4,1g.10gb@6 (7 of 8 memory slices, 6 of 7 "
            "compute slices)\n");
}

// ../shared/brief/mig.md: 19 maximal placements, 14 distinct multisets on A100.
TEST(MigCatalogReportTest, LayoutsAsTextAndJson) {
  const mig::GpuMigSpec& spec = MigGpu("a100-80gb-sxm");
  auto profiles = mig::ProfilesNamed(spec, "1g,2g,3g,4g,7g");
  ASSERT_TRUE(profiles);
  const auto layouts = mig::EnumerateMaximalLayouts(spec, *profiles);
  const std::string text = MigLayoutsText(spec, *profiles, layouts);
  EXPECT_TRUE(Contains(text,
                       "19 maximal layouts (14 distinct multisets) of 1g.10gb, 2g.20gb, "
                       "3g.40gb, 4g.40gb, 7g.80gb on a100-80gb-sxm\n"))
      << text;
  EXPECT_TRUE(Contains(text, "7g.80gb@0\n")) << text;
  const auto json = MigLayoutsJson(spec, *profiles, layouts);
  EXPECT_EQ(json["gpu"], "a100-80gb-sxm");
  EXPECT_EQ(json["profiles"].size(), 5u);
  EXPECT_EQ(json["layouts"].size(), 19u);
}

}  // namespace
}  // namespace headroom::report
