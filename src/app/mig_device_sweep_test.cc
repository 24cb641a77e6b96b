#include "app/mig_device_sweep.h"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "catalog/testing/embedded_catalogs.h"
#include "gpu/mig_apply.h"
#include "gpu/sim/sim_device.h"

namespace headroom::app {
namespace {

const mig::GpuMigSpec& SweepSpec() { return catalog::testing::MigGpu("a100-80gb-sxm"); }

// A simulated A100 on a FakeClock: the sweep's waits jump the clock, so no test sleeps through
// the idle window or the poll interval (the copies themselves are real, short processes).
class MigDeviceSweepTest : public ::testing::Test {
 protected:
  void Start(const std::string& layout, bool mig_enabled = true,
             std::vector<gpu::GpuProcess> processes = {}) {
    gpu::sim::SimOptions options;
    options.mig = SweepSpec();
    options.mig_enabled = mig_enabled;
    options.processes = std::move(processes);
    device_ = std::make_unique<gpu::sim::SimDevice>(0, catalog::testing::A100(), &clock_, options);
    if (!layout.empty()) {
      auto r =
          gpu::ApplyMigLayout(*device_, SweepSpec(), *mig::ParseLayout(layout), {.force = true});
      ASSERT_TRUE(r && r->ok()) << layout;
    }
  }
  core::Result<mig::DeviceSweep> Sweep(MigDeviceSweepOptions o) {
    if (o.command.empty()) o.command = {"true"};
    o.idle_s = 1;
    o.on_error = [this](const std::string& m) { errors_.push_back(m); };
    return RunMigDeviceSweep(*device_, SweepSpec(), clock_, o);
  }
  std::string Layout() {
    auto state = gpu::ReadMigState(*device_, SweepSpec());
    return state ? mig::FormatLayout(mig::ToLayout(SweepSpec(), *state)) : "error";
  }

  core::FakeClock clock_;
  std::unique_ptr<gpu::sim::SimDevice> device_;
  std::vector<std::string> errors_;
};

TEST_F(MigDeviceSweepTest, RunsOneCopyPerInstanceAttributesTheEnergyAndRestores) {
  Start("2g.20gb@4,1g.10gb@6");
  std::vector<std::string> announced;
  // Copies that outlast one poll, so that the (fake) window is never empty.
  auto sweep = Sweep({.layouts = {"3g.40gb@0,3g.40gb@4", "7g.80gb@0"},
                      .command = {"sleep", "0.05"},
                      .on_layout = [&](const std::string& l) { announced.push_back(l); }});
  ASSERT_TRUE(sweep) << sweep.error().message();
  EXPECT_EQ(sweep->original_layout, "2g.20gb@4,1g.10gb@6");
  EXPECT_EQ(announced, (std::vector<std::string>{"3g.40gb@0,3g.40gb@4", "7g.80gb@0"}));
  EXPECT_GT(sweep->idle_w, 0);
  ASSERT_EQ(sweep->runs.size(), 2u);
  EXPECT_EQ(sweep->runs[0].instances.size(), 2u);
  EXPECT_EQ(sweep->runs[1].instances[0].slice, "7g.80gb@0");
  for (const mig::LayoutRun& run : sweep->runs) {
    EXPECT_GT(run.window_s, 0);
    double activity = 0, sm_share = 0;
    for (const mig::InstanceRun& r : run.instances) {
      EXPECT_EQ(r.exit_code, 0);
      EXPECT_TRUE(r.uuid.starts_with("MIG-")) << r.uuid;
      EXPECT_LE(r.seconds, run.window_s);
      activity += r.energy_activity_j;
      sm_share += r.energy_sm_share_j;
    }
    EXPECT_NEAR(activity, run.energy_j, 1e-6 + 1e-9 * run.energy_j);
    EXPECT_NEAR(sm_share, run.energy_j, 1e-6 + 1e-9 * run.energy_j);
  }
  EXPECT_FALSE(sweep->AnyCopyFailed());
  EXPECT_EQ(Layout(), "2g.20gb@4,1g.10gb@6");
}

TEST_F(MigDeviceSweepTest, IdlePowerIsTheCounterOverTheIdleWindow) {
  Start("7g.80gb@0");
  auto sweep = Sweep({.layouts = {"7g.80gb@0"}});
  ASSERT_TRUE(sweep) << sweep.error().message();
  auto power = device_->PowerAverage();
  ASSERT_TRUE(power);
  EXPECT_NEAR(sweep->idle_w, power->value(), 0.1 * power->value());
}

TEST_F(MigDeviceSweepTest, WithoutLayoutsSweepsTheEqualInstanceLayouts) {
  Start("");
  auto sweep = Sweep({});
  ASSERT_TRUE(sweep) << sweep.error().message();
  std::vector<size_t> copies;
  for (const mig::LayoutRun& run : sweep->runs) copies.push_back(run.instances.size());
  EXPECT_EQ(copies, (std::vector<size_t>{1, 2, 3, 7}));
  EXPECT_EQ(Layout(), "");
}

TEST_F(MigDeviceSweepTest, AFailingCopyIsReportedAndTheLayoutStillRestored) {
  Start("7g.80gb@0");
  auto sweep = Sweep({.layouts = {"3g.40gb@0"}, .command = {"sh", "-c", "exit 3"}});
  ASSERT_TRUE(sweep) << sweep.error().message();
  EXPECT_EQ(sweep->runs[0].instances[0].exit_code, 3);
  EXPECT_TRUE(sweep->AnyCopyFailed());
  EXPECT_EQ(Layout(), "7g.80gb@0");
}

TEST_F(MigDeviceSweepTest, ACommandThatCannotStartNamesTheLayoutAndRestores) {
  Start("7g.80gb@0");
  auto sweep = Sweep({.layouts = {"3g.40gb@0"}, .command = {"/nonexistent/headroom-copy"}});
  ASSERT_FALSE(sweep);
  EXPECT_TRUE(sweep.error().message().starts_with("3g.40gb@0: ")) << sweep.error().message();
  EXPECT_EQ(Layout(), "7g.80gb@0");
}

TEST_F(MigDeviceSweepTest, AStopRestoresAndIsCancelled) {
  Start("7g.80gb@0");
  std::atomic<bool> stop = true;
  auto sweep = Sweep({.layouts = {"3g.40gb@0"}, .stop = &stop});
  ASSERT_FALSE(sweep);
  EXPECT_EQ(sweep.error().code(), core::Code::kCancelled);
  EXPECT_EQ(sweep.error().message(), "interrupted; the original layout '7g.80gb@0' is restored");
  EXPECT_EQ(Layout(), "7g.80gb@0");
}

TEST_F(MigDeviceSweepTest, RefusesWithMigModeOffAndChangesNothing) {
  Start("", /*mig_enabled=*/false);
  auto sweep = Sweep({.layouts = {"3g.40gb@0"}});
  ASSERT_FALSE(sweep);
  EXPECT_EQ(sweep.error().code(), core::Code::kFailedPrecondition);
  EXPECT_NE(sweep.error().message().find("--enable-mig"), std::string::npos);
  EXPECT_FALSE(device_->MigMode()->current);
}

TEST_F(MigDeviceSweepTest, EnableMigTurnsItOnForTheSweepAndOffAfter) {
  Start("", /*mig_enabled=*/false);
  auto sweep = Sweep({.layouts = {"3g.40gb@0,3g.40gb@4"}, .enable_mig = true});
  ASSERT_TRUE(sweep) << sweep.error().message();
  EXPECT_EQ(sweep->runs[0].instances.size(), 2u);
  EXPECT_FALSE(device_->MigMode()->current);
  EXPECT_TRUE(errors_.empty());
}

TEST_F(MigDeviceSweepTest, RefusesAnInvalidLayoutAndABusyGpu) {
  Start("7g.80gb@0");
  auto invalid = Sweep({.layouts = {"4g.40gb@0,2g.20gb@2"}});
  ASSERT_FALSE(invalid);
  EXPECT_TRUE(invalid.error().message().starts_with("--layout: ")) << invalid.error().message();

  Start("7g.80gb@0", true, {gpu::GpuProcess{.pid = 4242}});
  auto busy = Sweep({.layouts = {"3g.40gb@0"}});
  ASSERT_FALSE(busy);
  EXPECT_NE(busy.error().message().find("1 compute processes are running"), std::string::npos)
      << busy.error().message();
  EXPECT_EQ(Layout(), "7g.80gb@0");
}

}  // namespace
}  // namespace headroom::app
