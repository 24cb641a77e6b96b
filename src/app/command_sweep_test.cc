// The sweep verdicts (the best setting under the SLO) and the command sweep on simulated GPUs:
// every setting run, the GPUs left as found on success, on a failing command and on a bad
// setting.
#include "app/command_sweep.h"

#include <gtest/gtest.h>

#include "catalog/testing/embedded_catalogs.h"
#include "gpu/sim/sim_device.h"

namespace headroom::app {
namespace {

using catalog::testing::A100;

sim::Setting Clock(double mhz) { return {sim::Setting::Kind::kClockLock, mhz}; }
sim::Setting Limit(double w) { return {sim::Setting::Kind::kPowerLimit, w}; }

sim::Row RowOf(sim::Setting s, double latency, double peak, double energy) {
  sim::Row r;
  r.setting = s;
  r.latency_s = latency;
  r.peak_power_w = peak;
  r.energy_per_unit_j = energy;
  return r;
}

TEST(SweepVerdictTest, SummaryComparesEachSettingWithTheDefaultOverAllShapes) {
  // Two shapes per setting: the worst slowdown is taken over shapes, the peak is the largest.
  const std::vector<sim::Row> rows = {
      RowOf({}, 1.0, 300, 10),          RowOf({}, 2.0, 400, 20),
      RowOf(Clock(1200), 1.02, 250, 9), RowOf(Clock(1200), 2.2, 280, 18),
      RowOf(Limit(300), 1.01, 280, 10), RowOf(Limit(300), 2.04, 300, 19)};
  const auto summary = sim::Summarize(rows, 2);
  ASSERT_EQ(summary.size(), 3u);
  EXPECT_EQ(summary[1].label, "sm_clock=1200MHz");
  EXPECT_NEAR(summary[1].worst_slowdown, 0.10, 1e-12);
  EXPECT_NEAR(summary[1].peak_change, 280.0 / 400 - 1, 1e-12);
  EXPECT_NEAR(summary[1].energy_change, 27.0 / 30 - 1, 1e-12);
  // At +5% the clock lock (+10%, -30% peak) is out and the power limit (-25% peak) is best;
  // at +10% the clock lock is.
  EXPECT_EQ(sim::BestUnderSlo(summary, 0.05), std::optional<size_t>(2));
  EXPECT_EQ(sim::BestUnderSlo(summary, 0.10), std::optional<size_t>(1));
  EXPECT_EQ(sim::BestUnderSlo(summary, 0.0), std::optional<size_t>(0));
  EXPECT_EQ(sim::BestUnderSlo({}, 0.05), std::nullopt);
}

TEST(SweepVerdictTest, TracedSettingsAreTheDefaultAndTheLowestOfEachKnob) {
  const auto traced = sim::TracedSettings({{}, Clock(1400), Clock(900), Limit(250), Limit(350)});
  ASSERT_EQ(traced.size(), 3u);
  EXPECT_EQ(traced[1].Label(), "sm_clock=900MHz");
  EXPECT_EQ(traced[2].Label(), "power_limit=250W");
  EXPECT_EQ(sim::TracedSettings({{}}).size(), 1u);
}

TEST(SweepVerdictTest, BestCommandRunIsTheLowestPeakWithinTheSlo) {
  const std::vector<sim::CommandRun> runs = {
      {.setting = {}, .duration_s = 10, .peak_w = 400},
      {.setting = Clock(1000), .duration_s = 11, .peak_w = 250},
      {.setting = Limit(300), .duration_s = 10.4, .peak_w = 300}};
  EXPECT_EQ(sim::BestCommandRun(runs, 0.05), std::optional<size_t>(2));
  EXPECT_EQ(sim::BestCommandRun(runs, 0.10), std::optional<size_t>(1));
}

class CommandSweepTest : public ::testing::Test {
 protected:
  core::SystemClock clock_;
  gpu::sim::SimDevice device_{0, A100(), &clock_, {}};
  std::vector<gpu::Device*> devices_{&device_};
  CommandSweepOptions Options(std::string script) {
    return {.command = {"sh", "-c", std::move(script)},
            .interval = std::chrono::milliseconds(20),
            .settle = core::Duration::zero()};
  }
  void ExpectAsFound() {
    EXPECT_EQ(device_.PowerLimits()->requested, found_limit_);
    EXPECT_FALSE(*device_.SmClockLock());
  }
  core::Watts found_limit_ = device_.PowerLimits()->requested;
};

TEST_F(CommandSweepTest, RunsTheCommandUnderEverySettingAndRestoresTheGpus) {
  std::vector<std::string> notes;
  auto options = Options("sleep 0.1");
  options.note = [&](const std::string& n) { notes.push_back(n); };
  auto runs = RunCommandSweep(devices_, &clock_, {{}, Clock(1005), Limit(250)}, options);
  ASSERT_TRUE(runs) << runs.error().message();
  ASSERT_EQ(runs->size(), 3u);
  for (const sim::CommandRun& r : *runs) {
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_GE(r.duration_s, 0.1);
    EXPECT_GT(r.energy_j, 0);
  }
  EXPECT_EQ(notes.front(), "running under default");
  EXPECT_EQ(notes[2], "running under power_limit=250W");
  ExpectAsFound();
}

TEST_F(CommandSweepTest, AFailingCommandStopsTheSweepNamingTheSettingAndRestoresTheGpus) {
  auto runs = RunCommandSweep(devices_, &clock_, {{}, Limit(250)}, Options("exit 4"));
  ASSERT_FALSE(runs);
  EXPECT_EQ(runs.error().message(), "the command exited with 4 under default; stopping the sweep");
  ExpectAsFound();
}

TEST_F(CommandSweepTest, ASettingTheGpuRefusesIsAnErrorNamingItAndRestoresTheGpus) {
  auto runs = RunCommandSweep(devices_, &clock_, {{}, Clock(1005), Limit(5)}, Options("true"));
  ASSERT_FALSE(runs);
  EXPECT_NE(runs.error().message().find("power_limit=5W"), std::string::npos)
      << runs.error().message();
  ExpectAsFound();
}

TEST(DeviceSweepBoundsTest, ComeFromTheDevice) {
  core::FakeClock clock;
  gpu::sim::SimDevice device(0, A100(), &clock, {});
  auto bounds = DeviceSweepBounds(device);
  ASSERT_TRUE(bounds) << bounds.error().message();
  EXPECT_EQ(bounds->power_limit_min, A100().power_limit_min);
  EXPECT_EQ(bounds->power_limit_max, A100().power_limit_max);
  EXPECT_EQ(bounds->sm_clock_max, A100().sm_clock_max);
}

}  // namespace
}  // namespace headroom::app
