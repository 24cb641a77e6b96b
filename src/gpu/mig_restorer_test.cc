#include "gpu/mig_restorer.h"

#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/mig_catalog.h"
#include "gpu/mig_apply.h"
#include "gpu/sim/sim_device.h"
#include "gpu/testing/fault_device.h"

namespace headroom::gpu {
namespace {

const mig::GpuMigSpec& RestorerSpec() {
  static const auto catalog = catalog::MigCatalog::Embedded();
  return **catalog->Gpu("a100-80gb-sxm");
}

class MigRestorerTest : public ::testing::Test {
 protected:
  // A simulated A100, MIG mode as given, wrapped for fault injection, holding `layout`.
  void Start(const std::string& layout, bool mig_enabled = true) {
    static const auto hardware = catalog::HardwareCatalog::Embedded();
    sim::SimOptions options;
    options.mig = RestorerSpec();
    options.mig_enabled = mig_enabled;
    device_ = std::make_unique<testing::FaultDevice>(
        std::make_unique<sim::SimDevice>(0, **hardware->Gpu("a100-80gb-sxm"), &clock_, options));
    if (!layout.empty()) ApplyOrFail(layout);
  }
  void ApplyOrFail(const std::string& layout) {
    auto report =
        ApplyMigLayout(*device_, RestorerSpec(), *mig::ParseLayout(layout), {.force = true});
    ASSERT_TRUE(report && report->ok()) << layout;
  }
  std::string Layout() {
    auto state = ReadMigState(*device_, RestorerSpec());
    return state ? mig::FormatLayout(mig::ToLayout(RestorerSpec(), *state)) : "error";
  }
  bool MigOn() {
    auto mode = device_->MigMode();
    return mode && mode->current;
  }

  core::FakeClock clock_;
  std::unique_ptr<testing::FaultDevice> device_;
};

TEST(RestorableLayoutTest, AGpuInstanceWithoutComputeInstancesGetsOne) {
  const std::vector<mig::GpuInstanceState> state = {
      {.id = 1, .profile = "3g.40gb", .start = 0, .compute_instances = {}},
      {.id = 2,
       .profile = "3g.40gb",
       .start = 4,
       .compute_instances = {{.id = 0, .compute_slices = 2}, {.id = 1, .compute_slices = 1}}},
      {.id = 3,
       .profile = "1g.10gb",
       .start = 6,
       .compute_instances = {{.id = 0, .compute_slices = 1}}}};
  EXPECT_EQ(mig::FormatLayout(RestorableLayout(state)), "3g.40gb@0,3g.40gb@4/2c+1c,1g.10gb@6");
}

TEST_F(MigRestorerTest, PutsTheOriginalLayoutBackOnDestruction) {
  Start("4g.40gb@0,3g.40gb@4/2c+1c");
  {
    LayoutRestorer restorer(*device_, RestorerSpec(),
                            RestorableLayout(*ReadMigState(*device_, RestorerSpec())));
    ApplyOrFail("1g.10gb@0,1g.10gb@1");
    EXPECT_EQ(Layout(), "1g.10gb@0,1g.10gb@1");
  }
  EXPECT_EQ(Layout(), "4g.40gb@0,3g.40gb@4/2c+1c");
}

TEST_F(MigRestorerTest, RestoresOnlyOnce) {
  Start("7g.80gb@0");
  {
    LayoutRestorer restorer(*device_, RestorerSpec(), *mig::ParseLayout("7g.80gb@0"));
    ApplyOrFail("3g.40gb@0");
    EXPECT_TRUE(restorer.Restore());
    EXPECT_EQ(Layout(), "7g.80gb@0");
    ApplyOrFail("2g.20gb@0");
    EXPECT_TRUE(restorer.Restore());
  }
  EXPECT_EQ(Layout(), "2g.20gb@0");
}

TEST_F(MigRestorerTest, ReportsAFailedRestore) {
  Start("7g.80gb@0");
  LayoutRestorer restorer(*device_, RestorerSpec(), *mig::ParseLayout("7g.80gb@0"));
  ApplyOrFail("3g.40gb@0");
  device_->FailMigCreate(1, core::Error::Unavailable("driver refused"));
  const core::Status st = restorer.Restore();
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("driver refused"), std::string::npos) << st.error().message();
}

TEST_F(MigRestorerTest, TurnsMigModeBackOffAfterTheLayoutIsRestored) {
  Start("", /*mig_enabled=*/false);
  ASSERT_TRUE(device_->SetMigMode(true));
  std::optional<core::Error> error;
  {
    MigModeRestorer mode(*device_, [&](const core::Error& e) { error = e; });
    LayoutRestorer layout(*device_, RestorerSpec(), mig::Layout{});
    ApplyOrFail("3g.40gb@0");
  }
  EXPECT_FALSE(error.has_value()) << error->message();
  EXPECT_FALSE(MigOn());
}

TEST_F(MigRestorerTest, SaysWhyMigModeStayedOn) {
  Start("3g.40gb@0");
  std::optional<core::Error> error;
  {
    MigModeRestorer mode(*device_, [&](const core::Error& e) { error = e; });
  }
  ASSERT_TRUE(error.has_value());
  EXPECT_TRUE(MigOn());
}

}  // namespace
}  // namespace headroom::gpu
