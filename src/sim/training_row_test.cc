#include "sim/training_row.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/inference_fits.h"
#include "catalog/training_catalog.h"

namespace headroom::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// An iteration of 1 s: 0.7 s computing at 400 W, 0.3 s synchronizing at 150 W.
IterationProfile Square() {
  return {.compute_s = 0.7, .sync_s = 0.3, .compute_w = 400, .sync_w = 150};
}

TrainingRowConfig Row() {
  return {.servers = 4, .duration = seconds(120), .skew = milliseconds(20), .seed = 7};
}

TEST(TrainingRowTest, TheRowSwingsBetweenComputeAndSyncAtTheIterationRate) {
  const TrainingRowRun run = SimulateTrainingRow(Row(), Square(), nullptr);
  EXPECT_NEAR(run.peak_w, 4 * 8 * 400, 1);
  EXPECT_NEAR(run.minimum_w, 4 * 8 * 150, 1);
  // An iteration takes 1 s plus the slowest server's skew (< 20 ms).
  EXPECT_GT(run.iterations_per_hour(), 3600 / 1.021);
  EXPECT_LT(run.iterations_per_hour(), 3600 / 1.0);
  EXPECT_GT(run.low_band.share, 0.6);    // the 1 Hz fundamental
  EXPECT_GT(run.high_band.share, 0.05);  // its harmonics
  EXPECT_NEAR(run.energy_per_iteration_j(), 32 * (0.7 * 400 + 0.3 * 150), 32 * 10);
}

TEST(TrainingRowTest, TheSameSeedGivesTheSameRowAndAnotherSeedAnother) {
  const TrainingRowRun a = SimulateTrainingRow(Row(), Square(), nullptr);
  const TrainingRowRun b = SimulateTrainingRow(Row(), Square(), nullptr);
  EXPECT_EQ(a.power_w, b.power_w);
  TrainingRowConfig other = Row();
  other.seed = 8;
  EXPECT_NE(SimulateTrainingRow(other, Square(), nullptr).power_w, a.power_w);
}

TEST(TrainingRowTest, ACheckpointPausesTheJobAtItsPower) {
  TrainingRowConfig c = Row();
  c.checkpoint_every = seconds(50);
  c.checkpoint_for = seconds(10);
  c.checkpoint_w = 60;
  const TrainingRowRun run = SimulateTrainingRow(c, Square(), nullptr);
  ASSERT_EQ(run.checkpoint_starts_s.size(), 2u);
  EXPECT_NEAR(run.minimum_w, 4 * 8 * 60, 1);
  const TrainingRowRun plain = SimulateTrainingRow(Row(), Square(), nullptr);
  EXPECT_NEAR(run.iterations, plain.iterations - 20, 2);
}

TEST(TrainingRowTest, AFloorRaisesTheDipAndCostsEnergyNotThroughput) {
  const TrainingRowRun none = SimulateTrainingRow(Row(), Square(), nullptr);
  const PowerSmoothing floor{.floor_w = 300};
  const TrainingRowRun floored = SimulateTrainingRow(Row(), Square(), &floor);
  EXPECT_NEAR(floored.minimum_w, 4 * 8 * 300, 1);
  EXPECT_NEAR(floored.iterations_per_hour(), none.iterations_per_hour(), 1e-6);
  EXPECT_NEAR(floored.energy_per_iteration_j() - none.energy_per_iteration_j(), 32 * 0.3 * 150,
              32 * 10);
  EXPECT_LT(floored.low_band.amplitude_w, none.low_band.amplitude_w * 0.5);
}

TEST(TrainingRowTest, RampLimitsBoundTheLargestRampAndSlowTheClimb) {
  const TrainingRowRun none = SimulateTrainingRow(Row(), Square(), nullptr);
  const PowerSmoothing ramps{.ramp_up_w_per_s = 1000, .ramp_down_w_per_s = 500};
  IterationProfile slowed = Square();
  slowed.speed_at_power = {{400, 1.0}};  // speed falls linearly to nothing at the 150 W dip
  const TrainingRowRun limited = SimulateTrainingRow(Row(), slowed, &ramps);
  // Per GPU 1000 and 500 W/s, 32 GPUs and no non-GPU power.
  EXPECT_LE(limited.ramp_up_step_w_per_s, 32 * 1000 * 1.0001);
  EXPECT_LE(limited.ramp_down_step_w_per_s, 32 * 500 * 1.0001);
  EXPECT_GT(none.ramp_up_step_w_per_s, 32 * 1000 * 5);
  // 250 W takes 0.25 s to climb: the compute phase runs slower meanwhile.
  EXPECT_LT(limited.iterations_per_hour(), none.iterations_per_hour() * 0.99);
}

TEST(TrainingRowTest, AClockLockLowersTheSwingAndTheThroughput) {
  auto hardware = catalog::HardwareCatalog::Embedded();
  auto engines = catalog::EngineCatalog::Embedded();
  auto workloads = catalog::TrainingCatalog::Embedded();
  ASSERT_TRUE(hardware && engines && workloads);
  auto gpu = hardware->Gpu("a100-80gb-sxm");
  auto fits = engines->Engine(std::string(catalog::kDefaultEngine));
  ASSERT_TRUE(gpu && fits);
  auto fit = (*fits)->For((*gpu)->name);
  ASSERT_TRUE(fit) << fit.error().message();
  const model::TrainingModel training(*workloads->Workload("gpt-neox-20b"),
                                      model::GpuPowerModel(**gpu), fit->efficiency);
  const IterationProfile full = ProfileAtClock(training, (*gpu)->sm_clock_max);
  const IterationProfile locked = ProfileAtClock(training, core::Megahertz(1005));
  EXPECT_LT(locked.compute_w, full.compute_w);
  EXPECT_GT(locked.compute_s, full.compute_s);
  TrainingRowConfig c = Row();
  c.duration = seconds(200);
  const TrainingRowRun a = SimulateTrainingRow(c, full, nullptr);
  const TrainingRowRun b = SimulateTrainingRow(c, locked, nullptr);
  EXPECT_LT(b.peak_w - b.minimum_w, a.peak_w - a.minimum_w);
  EXPECT_LT(b.iterations_per_hour(), a.iterations_per_hour());
}

}  // namespace
}  // namespace headroom::sim
