#include "app/mig_model_sweep.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "catalog/mig_catalogs.h"
#include "core/testing/fresh_dir.h"
#include "mig/enumerate.h"

namespace headroom::app {
namespace {

// The sweep on the shipped catalogs: what it writes reads back as what it returned, with MIG off
// named as such and the plots beside the table.
TEST(MigModelSweepTest, WritesTheDirectoryItReturnsAndThePlots) {
  auto catalogs = catalog::MigCatalogs::Load(*catalog::HardwareCatalog::Embedded());
  ASSERT_TRUE(catalogs) << catalogs.error().message();
  auto model = catalogs->Model("h200", std::nullopt);
  ASSERT_TRUE(model) << model.error().message();
  auto workloads = catalogs->workloads.Select("resnet50-pretrain,gpt2-124m-finetune");
  ASSERT_TRUE(workloads);
  auto fits = catalogs->Fits(*workloads);
  ASSERT_TRUE(fits);
  const std::vector<std::string> given = {"7g.141gb@0", "3g.71gb@0,3g.71gb@4"};
  auto layouts = mig::SweepLayouts(model->mig(), given, "");
  ASSERT_TRUE(layouts);
  const std::string dir = core::testing::FreshDir("mig_model_sweep");
  double last_fraction = 0;
  auto sweep =
      RunMigModelSweep({.model = &*model,
                        .workloads = *workloads,
                        .fits = *fits,
                        .layouts = *layouts,
                        .out_dir = dir,
                        .version = "test",
                        .progress = [&](double f, const std::string&) { last_fraction = f; },
                        .on_warning = {}});
  ASSERT_TRUE(sweep) << sweep.error().message();
  EXPECT_DOUBLE_EQ(last_fraction, 1.0);
  EXPECT_EQ(sweep->report.inputs.layouts,
            (std::vector<std::string>{"MIG off", "7g.141gb@0", "3g.71gb@0,3g.71gb@4"}));
  EXPECT_EQ(sweep->report.inputs.workloads,
            (std::vector<std::string>{"resnet50-pretrain", "gpt2-124m-finetune"}));
  EXPECT_EQ(sweep->report.results.size(), 6u);
  auto read = report::ReadMigCharacterizeDir(dir);
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_EQ(report::MigResultsCsv(read->results), report::MigResultsCsv(sweep->report.results));
  EXPECT_EQ(read->inputs.version, "test");
  EXPECT_TRUE(sweep->plotted);
  EXPECT_TRUE(std::filesystem::exists(dir + "/mig-throughput.svg"));
  EXPECT_TRUE(std::filesystem::exists(dir + "/mig-energy.svg"));
}

TEST(MigModelSweepTest, AnUnwritableDirectoryIsAnError) {
  auto catalogs = catalog::MigCatalogs::Load(*catalog::HardwareCatalog::Embedded());
  ASSERT_TRUE(catalogs);
  auto model = catalogs->Model("h200", std::nullopt);
  ASSERT_TRUE(model);
  auto sweep = RunMigModelSweep({.model = &*model, .out_dir = "/proc/headroom-mig"});
  ASSERT_FALSE(sweep);
  EXPECT_NE(sweep.error().message().find("/proc/headroom-mig"), std::string::npos)
      << sweep.error().message();
}

}  // namespace
}  // namespace headroom::app
