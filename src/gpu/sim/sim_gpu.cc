#include "gpu/sim/sim_gpu.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace headroom::gpu::sim {
namespace {

constexpr size_t kRingSteps = 1000;  // 1 s of 1 ms steps: the driver's averaging window
constexpr double kStepS = 1e-3;
constexpr size_t kHistoryWindows = 100;  // 10 s of the A100's 100 ms sensor period

// Memory a serving process keeps allocated (weights + KV cache pool), as a fraction of the
// device; vLLM's default gpu_memory_utilization is 0.9.
constexpr double kLoadedMemoryFraction = 0.9;
// An idle GPU still holds the driver's context.
constexpr double kIdleMemoryFraction = 0.005;

}  // namespace

SimGpu::SimGpu(const model::GpuSpec& spec, LoadScript script)
    : model_(spec),
      script_(std::move(script)),
      limiter_(spec.limiter, spec.sm_clock_max),
      power_limit_(spec.power_limit_default),
      temperature_c_(spec.thermal.ambient.value() +
                     spec.idle_power.value() * spec.thermal.c_per_w) {
  power_w_ = spec.idle_power.value();
  instant_w_ = power_w_;
  f_eff_mhz_ = spec.sm_clock_max.value();
}

void SimGpu::set_script(LoadScript script) {
  script_ = std::move(script);
  target_key_.reset();
}

void SimGpu::Advance(core::Duration dt) {
  HEADROOM_CHECK(dt.count() >= 0) << "simulated time must not run backwards";
  pending_ += dt;
  while (pending_ >= kStep) {
    Step();
    pending_ -= kStep;
  }
}

core::Megahertz SimGpu::Ceiling() const {
  const core::Megahertz f_max = spec().sm_clock_max;
  return lock_ ? std::min(lock_->max, f_max) : f_max;
}

core::Megahertz SimGpu::TargetClock(const LoadSegment& seg, core::Megahertz ceiling) {
  const TargetKey key{segment_, power_limit_.value(), ceiling.value()};
  if (target_key_ != key) {
    target_ =
        seg.busy > 0 ? model_.MaxClockUnder(power_limit_, seg.phase, seg.busy, ceiling) : ceiling;
    target_key_ = key;
  }
  return target_;
}

void SimGpu::Step() {
  const model::GpuSpec& s = spec();
  segment_ = script_.SegmentIndexAt(elapsed_);
  const LoadSegment& seg = script_.segments()[segment_];

  const core::Megahertz ceiling = Ceiling();
  const core::Megahertz limited = limiter_.Step(TargetClock(seg, ceiling), kStep);
  f_eff_mhz_ = std::min(ceiling, limited).value();

  model::Activity activity;
  if (seg.busy > 0) {
    activity = model_.Time(seg.phase, core::Megahertz(f_eff_mhz_)).activity;
    activity.busy *= seg.busy;
    activity.sm *= seg.busy;
    activity.mem *= seg.busy;
  }
  power_w_ = Smooth(model_.Power(activity, core::Megahertz(f_eff_mhz_)).value());
  energy_j_ += power_w_ * kStepS;

  // While the ring fills, the entry leaving it is a zero.
  RingEntry& entry = ring_.size() < kRingSteps ? ring_.emplace_back() : ring_[ring_pos_];
  power_sum_ += power_w_ - entry.power_w;
  busy_sum_ += activity.busy - entry.busy;
  mem_sum_ += activity.mem - entry.mem;
  entry = {.power_w = power_w_, .busy = activity.busy, .mem = activity.mem};
  ring_pos_ = (ring_pos_ + 1) % kRingSteps;

  // Duty-cycled sensor: average over the window at the start of each period, held until the
  // next window closes.
  const core::Duration in_period = elapsed_ % s.sensor.instant_period;
  if (in_period < s.sensor.instant_window) {
    window_sum_w_ += power_w_;
    ++window_steps_;
    if (in_period + kStep >= s.sensor.instant_window) {
      instant_w_ = window_sum_w_ / window_steps_;
      window_sum_w_ = 0;
      window_steps_ = 0;
      const auto stamp = std::chrono::duration_cast<std::chrono::microseconds>(elapsed_ + kStep);
      history_.push_back({static_cast<std::uint64_t>(stamp.count()), core::Watts(instant_w_)});
      while (history_.size() > kHistoryWindows) history_.pop_front();
    }
  }

  const double alpha = 1.0 - std::exp(-kStepS / core::ToSeconds(s.thermal.tau));
  const double steady_c = s.thermal.ambient.value() + power_w_ * s.thermal.c_per_w;
  temperature_c_ += (steady_c - temperature_c_) * alpha;

  elapsed_ += kStep;
  if (elapsed_ >= next_counter_update_) {
    counter_j_ = std::floor(energy_j_ * 1000.0) / 1000.0;  // the driver counts whole mJ
    next_counter_update_ += s.sensor.energy_update_period;
  }
}

double SimGpu::Smooth(double demand_w) {
  if (!smoothing_) return demand_w;
  const double target = std::max(demand_w, smoothing_->floor.value());
  if (target >= power_w_) {
    falling_for_ = core::Duration::zero();
    return std::min(target, power_w_ + smoothing_->ramp_up_w_per_s * kStepS);
  }
  if (falling_for_ < smoothing_->ramp_down_hysteresis) {
    falling_for_ += kStep;
    return power_w_;
  }
  return std::max(target, power_w_ - smoothing_->ramp_down_w_per_s * kStepS);
}

core::Watts SimGpu::average_power() const {
  if (ring_.empty()) return core::Watts(power_w_);
  return core::Watts(power_sum_ / static_cast<double>(ring_.size()));
}

core::Megahertz SimGpu::sm_clock() const {
  const LoadSegment& seg = script_.segments()[segment_];
  if (seg.busy > 0) return spec().SnapClock(core::Megahertz(f_eff_mhz_));
  // Idle: the clock drops to its floor, or to the bottom of a lock.
  return lock_ ? lock_->min : spec().sm_clock_idle;
}

UtilizationRates SimGpu::utilization() const {
  if (ring_.empty()) return {};
  const double n = static_cast<double>(ring_.size());
  return {.gpu_percent = std::clamp(100.0 * busy_sum_ / n, 0.0, 100.0),
          .memory_percent = std::clamp(100.0 * mem_sum_ / n, 0.0, 100.0)};
}

std::uint64_t SimGpu::throttle_reasons() const {
  const LoadSegment& seg = script_.segments()[segment_];
  std::uint64_t reasons = 0;
  if (seg.busy <= 0) reasons |= kThrottleGpuIdle;
  if (lock_ && lock_->max < spec().sm_clock_max) reasons |= kThrottleClockSetting;
  // The limiter holds the clock below what the lock or the maximum allows.
  if (seg.busy > 0 && limiter_.ceiling() < Ceiling() - spec().sm_clock_step * 0.5) {
    reasons |= kThrottleSwPowerCap;
  }
  return reasons;
}

double SimGpu::memory_used_fraction() const {
  for (const LoadSegment& seg : script_.segments()) {
    if (seg.busy > 0) return kLoadedMemoryFraction;
  }
  return kIdleMemoryFraction;
}

}  // namespace headroom::gpu::sim
