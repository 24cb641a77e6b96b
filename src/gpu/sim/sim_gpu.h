// SimGpu: the physical state of one simulated GPU (clock, power, energy, temperature, sensor
// readings) advanced in fixed 1 ms steps through the GPU power model. It has no clock of its
// own: its owner advances it. The sensor behaves as the driver's does (nvml.md §5): "instant"
// power is the average over a short window sampled once per period, the average is over 1 s,
// the energy counter moves in steps of its update period, and the power limit acts with a lag.
// Thread-compatible (SimDevice adds the locking).
#ifndef HEADROOM_GPU_SIM_SIM_GPU_H_
#define HEADROOM_GPU_SIM_SIM_GPU_H_

#include <deque>
#include <optional>
#include <vector>

#include "core/time.h"
#include "core/units.h"
#include "gpu/device.h"
#include "gpu/sim/load_script.h"
#include "model/gpu_power_model.h"
#include "model/power_limiter.h"

namespace headroom::gpu::sim {

class SimGpu {
 public:
  static constexpr core::Duration kStep = std::chrono::milliseconds(1);

  // Power smoothing in force (Blackwell's firmware feature, as NVML describes it): the power
  // never falls below `floor`, rises at most `ramp_up_w_per_s`, and falls, once a drop has lasted
  // `ramp_down_hysteresis`, at most `ramp_down_w_per_s`. The GPU burns what the load does not
  // draw, so the energy counts the smoothed power. A rise is not made to slow the load: the
  // model has no lever for that, so only the power shows the ramp.
  struct Smoothing {
    core::Watts floor{0};
    double ramp_up_w_per_s = 0;    // > 0
    double ramp_down_w_per_s = 0;  // > 0
    core::Duration ramp_down_hysteresis{0};
  };

  SimGpu(const model::GpuSpec& spec, LoadScript script);

  // Advances the state by dt (carried over in whole steps; a remainder waits for the next call).
  void Advance(core::Duration dt);

  // REQUIRES: spec().power_limit_min <= limit <= spec().power_limit_max.
  void set_power_limit(core::Watts limit) { power_limit_ = limit; }
  // REQUIRES: lock, if any, within the supported clock range with min <= max.
  void set_clock_lock(std::optional<ClockLock> lock) { lock_ = lock; }
  void set_script(LoadScript script);
  // nullopt: smoothing off (the power follows the load).
  void set_smoothing(std::optional<Smoothing> smoothing) { smoothing_ = smoothing; }

  const model::GpuSpec& spec() const { return model_.spec(); }
  core::Watts power_limit() const { return power_limit_; }
  const std::optional<ClockLock>& clock_lock() const { return lock_; }
  core::Duration elapsed() const { return elapsed_; }

  core::Watts true_power() const { return core::Watts(power_w_); }
  core::Joules true_energy() const { return core::Joules(energy_j_); }
  core::Watts instant_power() const { return core::Watts(instant_w_); }
  // The sensor's readings, one per closed window, newest last (the last ~10 s), each stamped
  // with the simulated time in microseconds at which its window closed.
  const std::deque<PowerSample>& power_history() const { return history_; }
  core::Watts average_power() const;
  core::Joules energy_counter() const { return core::Joules(counter_j_); }
  core::Megahertz sm_clock() const;
  UtilizationRates utilization() const;
  core::Celsius temperature() const { return core::Celsius(temperature_c_); }
  std::uint64_t throttle_reasons() const;
  double memory_used_fraction() const;

 private:
  void Step();
  // The power after smoothing, from the load's demand and the previous step's power.
  double Smooth(double demand_w);
  core::Megahertz Ceiling() const;
  core::Megahertz TargetClock(const LoadSegment& seg, core::Megahertz ceiling);

  model::GpuPowerModel model_;
  LoadScript script_;
  model::PowerLimiter limiter_;
  core::Watts power_limit_;
  std::optional<ClockLock> lock_;
  std::optional<Smoothing> smoothing_;
  core::Duration falling_for_{0};  // how long the smoothed power has wanted to fall

  core::Duration elapsed_{0};
  core::Duration pending_{0};
  size_t segment_ = 0;
  double f_eff_mhz_ = 0;
  double power_w_ = 0;
  double energy_j_ = 0;
  double counter_j_ = 0;
  core::Duration next_counter_update_{0};
  double temperature_c_ = 0;

  // The last second of per-step power, busy and memory activity, for 1 s averages. It grows to
  // its size as the steps come: a GPU that never steps (`headroom gpus`) touches none of it.
  struct RingEntry {
    double power_w = 0;
    double busy = 0;
    double mem = 0;
  };
  std::vector<RingEntry> ring_;
  size_t ring_pos_ = 0;
  double power_sum_ = 0, busy_sum_ = 0, mem_sum_ = 0;

  double window_sum_w_ = 0;
  int window_steps_ = 0;
  double instant_w_ = 0;
  std::deque<PowerSample> history_;

  // Cache of the limiter's target clock, valid while its inputs are unchanged.
  struct TargetKey {
    size_t segment;
    double limit_w;
    double ceiling_mhz;
    bool operator==(const TargetKey&) const = default;
  };
  std::optional<TargetKey> target_key_;
  core::Megahertz target_{0};
};

}  // namespace headroom::gpu::sim

#endif  // HEADROOM_GPU_SIM_SIM_GPU_H_
