#include "gpu/mig_view.h"

#include <memory>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/mig_catalog.h"
#include "gpu/mig_apply.h"
#include "gpu/sim/sim_device.h"

namespace headroom::gpu {
namespace {

const mig::GpuMigSpec& ViewSpec() {
  static const auto catalog = catalog::MigCatalog::Embedded();
  return **catalog->Gpu("a100-80gb-sxm");
}

// A simulated A100; with `mig` its MIG profiles, MIG mode as given.
std::unique_ptr<sim::SimDevice> ViewDevice(core::Clock* clock, bool mig, bool enabled = true) {
  static const auto hardware = catalog::HardwareCatalog::Embedded();
  sim::SimOptions options;
  if (mig) options.mig = ViewSpec();
  options.mig_enabled = enabled;
  return std::make_unique<sim::SimDevice>(0, **hardware->Gpu("a100-80gb-sxm"), clock, options);
}

core::Result<mig::GpuMigSpec> FoundSpec(const Device&) { return ViewSpec(); }

core::Result<mig::GpuMigSpec> NoSpec(const Device& device) {
  return core::Fail(
      core::Error::NotFound(fmt::format("GPU {}: not in the catalog", device.info().index)));
}

TEST(ReadMigViewTest, NamesEachInstanceByTheCatalogsProfileAndGivesTheLayout) {
  core::FakeClock clock;
  auto device = ViewDevice(&clock, /*mig=*/true);
  ASSERT_TRUE(ApplyMigLayout(*device, ViewSpec(), *mig::ParseLayout("3g.40gb@4,1g.10gb@0"), {}));
  auto view = ReadMigView(*device, FoundSpec);
  ASSERT_TRUE(view) << view.error().message();
  ASSERT_TRUE(view->mode.has_value());
  EXPECT_TRUE(view->mode->current);
  EXPECT_EQ(view->type, "a100-80gb-sxm");
  ASSERT_EQ(view->instances.size(), 2u);
  ASSERT_EQ(view->profile_names.size(), 2u);
  for (std::size_t i = 0; i < view->instances.size(); ++i) {
    EXPECT_EQ(view->profile_names[i], view->instances[i].start == 0 ? "1g.10gb" : "3g.40gb");
  }
  EXPECT_EQ(view->layout, "1g.10gb@0,3g.40gb@4");  // canonical: by placement
}

TEST(ReadMigViewTest, ABackendWithoutMigIsAViewWithItsReasonNotAnError) {
  core::FakeClock clock;
  auto device = ViewDevice(&clock, /*mig=*/false);
  auto view = ReadMigView(*device, NoSpec);
  ASSERT_TRUE(view) << view.error().message();
  EXPECT_FALSE(view->mode.has_value());
  EXPECT_FALSE(view->no_mig_reason.empty());
}

TEST(ReadMigViewTest, TheCatalogIsAskedOnlyWithMigModeOn) {
  core::FakeClock clock;
  auto off = ViewDevice(&clock, /*mig=*/true, /*enabled=*/false);
  auto view = ReadMigView(*off, NoSpec);
  ASSERT_TRUE(view) << view.error().message();
  EXPECT_FALSE(view->mode->current);
  auto on = ViewDevice(&clock, /*mig=*/true);
  auto failed = ReadMigView(*on, NoSpec);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().message(), "GPU 0: not in the catalog");
}

TEST(CheckDeviceMigProfilesTest, TheDriversProfilesAgreeWithTheCatalogTheyCameFrom) {
  core::FakeClock clock;
  auto device = ViewDevice(&clock, /*mig=*/true, /*enabled=*/false);
  auto check = CheckDeviceMigProfiles(*device, FoundSpec);
  ASSERT_TRUE(check) << check.error().message();
  EXPECT_EQ(check->catalog, "a100-80gb-sxm");
  EXPECT_FALSE(check->mode->current);
  EXPECT_EQ(check->rows.size(), ViewSpec().profiles.size());
  EXPECT_EQ(check->mismatches(), 0);
}

TEST(CheckDeviceMigProfilesTest, AGpuTheCatalogLacksDiffersInEveryRow) {
  core::FakeClock clock;
  auto device = ViewDevice(&clock, /*mig=*/true);
  auto check = CheckDeviceMigProfiles(*device, NoSpec);
  ASSERT_TRUE(check) << check.error().message();
  EXPECT_FALSE(check->catalog.has_value());
  EXPECT_EQ(check->no_catalog_reason, "GPU 0: not in the catalog");
  ASSERT_FALSE(check->rows.empty());
  EXPECT_EQ(check->mismatches(), static_cast<int>(check->rows.size()));
}

TEST(CheckDeviceMigProfilesTest, ADriverThatCannotListProfilesIsAnError) {
  core::FakeClock clock;
  auto device = ViewDevice(&clock, /*mig=*/false);
  auto check = CheckDeviceMigProfiles(*device, FoundSpec);
  ASSERT_FALSE(check);
  EXPECT_EQ(check.error().code(), core::Code::kUnimplemented);
}

}  // namespace
}  // namespace headroom::gpu
