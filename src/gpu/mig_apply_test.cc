#include "gpu/mig_apply.h"

#include <memory>

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/mig_catalog.h"
#include "gpu/sim/sim_device.h"
#include "gpu/testing/fault_device.h"

namespace headroom::gpu {
namespace {

const mig::GpuMigSpec& A100Mig() {
  static const auto catalog = catalog::MigCatalog::Embedded();
  return **catalog->Gpu("a100-80gb-sxm");
}

mig::Layout Parse(const std::string& text) { return *mig::ParseLayout(text); }

class MigApplyTest : public ::testing::Test {
 protected:
  // A simulated A100 with MIG, wrapped for fault injection, holding `layout` (empty: none).
  void Start(const std::string& layout, sim::SimOptions options = {}) {
    static const auto hardware = catalog::HardwareCatalog::Embedded();
    options.mig = A100Mig();
    auto sim =
        std::make_unique<sim::SimDevice>(0, **hardware->Gpu("a100-80gb-sxm"), &clock_, options);
    sim_ = sim.get();
    device_ = std::make_unique<testing::FaultDevice>(std::move(sim));
    if (!layout.empty()) {
      auto report = ApplyMigLayout(*device_, A100Mig(), Parse(layout), {.force = true});
      ASSERT_TRUE(report && report->ok()) << layout;
    }
  }

  std::string Layout() {
    auto state = ReadMigState(*device_, A100Mig());
    EXPECT_TRUE(state) << state.error().message();
    return state ? mig::FormatLayout(mig::ToLayout(A100Mig(), *state)) : "error";
  }

  core::FakeClock clock_;
  sim::SimDevice* sim_ = nullptr;
  std::unique_ptr<testing::FaultDevice> device_;
};

TEST_F(MigApplyTest, AppliesALayoutAndReportsBeforeAndAfter) {
  Start("7g.80gb@0");
  auto report =
      ApplyMigLayout(*device_, A100Mig(), Parse("3g.40gb@4,2g.20gb@0/1c+1c,1g.10gb@2"), {});
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->before, "7g.80gb@0");
  EXPECT_EQ(report->after, "2g.20gb@0/1c+1c,1g.10gb@2,3g.40gb@4");
  EXPECT_EQ(report->done.size(), report->plan.steps.size());
  EXPECT_EQ(Layout(), report->after);
}

TEST_F(MigApplyTest, DryRunChangesNothing) {
  Start("7g.80gb@0");
  auto report =
      ApplyMigLayout(*device_, A100Mig(), Parse("3g.40gb@0,3g.40gb@4"), {.dry_run = true});
  ASSERT_TRUE(report) << report.error().message();
  EXPECT_EQ(report->plan.steps.size(), 6u);
  EXPECT_TRUE(report->done.empty());
  EXPECT_EQ(Layout(), "7g.80gb@0");
}

TEST_F(MigApplyTest, AFailedCreateRollsBackToTheOriginalLayoutExactly) {
  Start("4g.40gb@0/2c+1c,2g.20gb@4,1g.10gb@6");
  const auto original = ReadMigState(*device_, A100Mig());
  // Steps: 4 CI destroys, 3 GI destroys, then creates: 3g@0 ok, 3g@4 fails.
  device_->FailMigCreate(2, core::Error::ResourceExhausted("injected"));
  auto report = ApplyMigLayout(*device_, A100Mig(), Parse("3g.40gb@0,3g.40gb@4"), {});
  ASSERT_TRUE(report) << report.error().message();
  ASSERT_FALSE(report->ok());
  EXPECT_EQ(report->error->code(), core::Code::kResourceExhausted);
  EXPECT_EQ(report->error->message(), "create 3g.40gb@4 failed: injected");
  EXPECT_FALSE(report->rollback_error) << report->rollback_error->message();
  EXPECT_FALSE(report->rollback.empty());
  EXPECT_EQ(report->after, "4g.40gb@0/2c+1c,2g.20gb@4,1g.10gb@6");
  auto now = ReadMigState(*device_, A100Mig());
  ASSERT_TRUE(now);
  ASSERT_EQ(now->size(), original->size());
  EXPECT_EQ(mig::FormatLayout(mig::ToLayout(A100Mig(), *now)),
            mig::FormatLayout(mig::ToLayout(A100Mig(), *original)));
}

TEST_F(MigApplyTest, AFailedComputeInstanceCreateAlsoRollsBack) {
  Start("7g.80gb@0");
  device_->FailMigCreate(3, core::Error::Internal("injected"));  // 3g@0, 3g@4, then a CI
  auto report = ApplyMigLayout(*device_, A100Mig(), Parse("3g.40gb@0,3g.40gb@4"), {});
  ASSERT_TRUE(report);
  ASSERT_FALSE(report->ok());
  EXPECT_EQ(report->error->message(), "create 3c compute instance in 3g.40gb@0 failed: injected");
  EXPECT_EQ(Layout(), "7g.80gb@0");
}

TEST_F(MigApplyTest, RefusesWhileProcessesRunUnlessForced) {
  sim::SimOptions options;
  options.processes = {{.pid = 4242, .used_memory_bytes = 1 << 30, .gpu_instance_id = 2}};
  Start("3g.40gb@0,3g.40gb@4", options);
  auto refused = ApplyMigLayout(*device_, A100Mig(), Parse("7g.80gb@0"), {});
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code(), core::Code::kFailedPrecondition);
  EXPECT_EQ(refused.error().message(),
            "GPU 0 has running compute processes: 4242 (GPU instance 2)");
  // Forced, the destroy of the busy instance fails and everything is restored.
  auto forced = ApplyMigLayout(*device_, A100Mig(), Parse("7g.80gb@0"), {.force = true});
  ASSERT_TRUE(forced);
  ASSERT_FALSE(forced->ok());
  EXPECT_EQ(forced->error->code(), core::Code::kFailedPrecondition);
  EXPECT_EQ(Layout(), "3g.40gb@0,3g.40gb@4");
  // Forced, a layout that keeps the busy instance goes through.
  auto kept =
      ApplyMigLayout(*device_, A100Mig(), Parse("2g.20gb@0,2g.20gb@2,3g.40gb@4"), {.force = true});
  ASSERT_TRUE(kept);
  EXPECT_TRUE(kept->ok()) << kept->error->message();
  EXPECT_EQ(Layout(), "2g.20gb@0,2g.20gb@2,3g.40gb@4");
}

TEST_F(MigApplyTest, RefusalsChangeNothing) {
  sim::SimOptions off;
  off.mig_enabled = false;
  Start("", off);
  auto disabled = ApplyMigLayout(*device_, A100Mig(), Parse("7g.80gb@0"), {});
  ASSERT_FALSE(disabled);
  EXPECT_EQ(disabled.error().code(), core::Code::kFailedPrecondition);
  EXPECT_NE(disabled.error().message().find("MIG mode is disabled; enable it"), std::string::npos)
      << disabled.error().message();
  auto invalid = ApplyMigLayout(*device_, A100Mig(), Parse("3g.40gb@2"), {});
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().code(), core::Code::kInvalidArgument);
}

}  // namespace
}  // namespace headroom::gpu
