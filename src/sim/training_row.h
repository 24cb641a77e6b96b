// SimulateTrainingRow: the power of a row of servers that run one synchronized data-parallel
// training job, step by step (10 ms by default, so that swings up to 30 Hz are resolved), and
// what a mitigation of its swings does to it: an SM clock lock (a lower, longer compute phase) or
// NVIDIA's power smoothing as its firmware applies it per GPU (a power floor, ramp-up and
// ramp-down rate limits, a ramp-down hysteresis). Outputs the row's ramps, the share and
// amplitude of its swing in frequency bands (power_spectrum.h), its throughput and energy.
//
// The job: every iteration, each server computes (its GPUs at the compute phase's power) then
// waits at the synchronization power; the all-reduce ends sync_s after the last server finished
// computing, and the next iteration starts for everyone then. Each server starts computing a
// skew after the others, drawn anew every iteration uniformly in [0, skew) from the seed (launch
// and data-loading jitter: an assumption, not a measurement), so the row is not a perfect square
// wave and the slowest server sets the pace. Every checkpoint_every the job stops after its
// current iteration for checkpoint_for with its GPUs at checkpoint_w. The eight GPUs of a server
// move together. Pure; thread-safe.
#ifndef HEADROOM_SIM_TRAINING_ROW_H_
#define HEADROOM_SIM_TRAINING_ROW_H_

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/time.h"
#include "model/training_model.h"
#include "sim/power_spectrum.h"

namespace headroom::sim {

// What one GPU does in an iteration under a mitigation's clock (model::TrainingModel).
struct IterationProfile {
  double compute_s = 0;  // at full speed
  double sync_s = 0;
  double compute_w = 0;
  double sync_w = 0;
  // How fast the compute phase goes on less power than compute_w (a ramp-up limit's cost):
  // (power W, speed as a share of full speed), ascending in power, the GPU power model's clock
  // steps. Below the first point speed falls linearly to nothing at sync_w (an approximation:
  // the clock cannot go lower, so the firmware would stall work). Empty: full speed at any power.
  std::vector<std::pair<double, double>> speed_at_power = {};
};

// The iteration at SM clock `clock` (capped by the GPU's default power limit, as its firmware
// would), with the speed table over the GPU's supported clocks.
IterationProfile ProfileAtClock(const model::TrainingModel& training, core::Megahertz clock);

// NVIDIA power smoothing's settings for one GPU (nvmlDevicePowerSmoothing*: Blackwell and later).
struct PowerSmoothing {
  double floor_w = 0;  // while enabled the GPU draws at least this, burning the difference
  double ramp_up_w_per_s = std::numeric_limits<double>::infinity();
  double ramp_down_w_per_s = std::numeric_limits<double>::infinity();
  // How long the demand must stay below the drawn power before the ramp down starts.
  core::Duration ramp_down_hysteresis{0};
};

struct TrainingRowConfig {
  int servers = 1;
  int gpus_per_server = 8;
  core::Duration step{std::chrono::milliseconds(10)};
  core::Duration duration{std::chrono::minutes(10)};
  core::Duration checkpoint_every{0};  // 0: no checkpoints
  core::Duration checkpoint_for{0};
  double checkpoint_w = 0;  // per GPU while checkpointing (its idle power)
  core::Duration skew{std::chrono::milliseconds(20)};
  // The rest of a server: non_gpu_idle_w with its GPUs at gpu_idle_w, plus non_gpu_slope W per
  // GPU watt above that (model::NonGpuPower).
  double non_gpu_idle_w = 0;
  double non_gpu_slope = 0;
  double gpu_idle_w = 0;
  core::Duration ramp_window{std::chrono::seconds(1)};
  std::uint64_t seed = 1;
};

struct TrainingRowRun {
  double step_s = 0;
  std::vector<double> power_w = {};  // the row's mean power over each step
  std::vector<double> checkpoint_starts_s = {};
  std::vector<double> iteration_ends_s = {};
  long iterations = 0;   // completed within the duration
  double busy_s = 0;     // when the last of them ended
  double energy_j = 0;   // the row's, up to busy_s
  double average_w = 0;  // over the whole duration
  double peak_w = 0;     // of a step
  double minimum_w = 0;
  // Largest rises and falls (W/s): step to step, and between the means of consecutive ramp
  // windows sliding by a step (what a meter averaging over the window reports).
  double ramp_up_step_w_per_s = 0;
  double ramp_down_step_w_per_s = 0;
  double ramp_up_window_w_per_s = 0;
  double ramp_down_window_w_per_s = 0;
  Spectrum spectrum = {};
  BandSwing low_band = {};   // 0.1-2 Hz
  BandSwing high_band = {};  // 3-30 Hz

  double iterations_per_hour() const { return busy_s > 0 ? iterations * 3600.0 / busy_s : 0; }
  double energy_per_iteration_j() const { return iterations > 0 ? energy_j / iterations : 0; }
};

// The grid's bands (issue 50: no sustained swings at 0.1-2 Hz and 3-30 Hz).
inline constexpr double kLowBandLoHz = 0.1;
inline constexpr double kLowBandHiHz = 2.0;
inline constexpr double kHighBandLoHz = 3.0;
inline constexpr double kHighBandHiHz = 30.0;

// `smoothing` null: the GPUs draw what they demand. REQUIRES: config.servers > 0, step > 0,
// duration >= step, profile.compute_s > 0.
TrainingRowRun SimulateTrainingRow(const TrainingRowConfig& config, const IterationProfile& profile,
                                   const PowerSmoothing* smoothing);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_TRAINING_ROW_H_
