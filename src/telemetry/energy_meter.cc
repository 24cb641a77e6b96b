#include "telemetry/energy_meter.h"

#include <algorithm>
#include <cmath>

#include "gpu/device.h"

namespace headroom::telemetry {
namespace {

// Below this, the counter's 20-100 ms steps are too coarse to trust (nvml.md §5.3).
constexpr core::Duration kMinCounterWindow = std::chrono::seconds(1);

std::optional<core::Watts> PowerOf(const gpu::DeviceSnapshot& s, std::string* reading) {
  if (s.power_instant) {
    *reading = "instant";
    return s.power_instant;
  }
  if (s.power_average) {
    *reading = "1s-average";
    return s.power_average;
  }
  return std::nullopt;
}

}  // namespace

EnergyMeter::Accumulator& EnergyMeter::Current() { return phases_[phase_]; }

void EnergyMeter::MarkPhase(const std::string& phase) {
  // Energy between the previous snapshot and the next one goes to the new phase: the sampler
  // calls this between snapshots, so the boundary is accurate to one sampling interval.
  phase_ = phase;
  if (std::find(phase_order_.begin(), phase_order_.end(), phase) == phase_order_.end()) {
    phase_order_.push_back(phase);
  }
}

void EnergyMeter::AddDriverSample(core::Watts power) {
  ++driver_samples_;
  peak_ = std::max(peak_, power);
}

void EnergyMeter::Add(const gpu::DeviceSnapshot& s) {
  ++samples_;
  if (!first_time_) first_time_ = s.time;
  std::string reading;
  const std::optional<core::Watts> power = PowerOf(s, &reading);
  if (power) {
    power_reading_ = reading;
    peak_ = std::max(peak_, *power);
  }
  if (!s.energy_counter) counter_missing_ = true;
  if (last_) {
    const core::Duration dt = s.time - last_->time;
    const double dt_s = core::ToSeconds(dt);
    std::string last_reading;
    const std::optional<core::Watts> last_power = PowerOf(*last_, &last_reading);
    double integrated = 0;
    if (power && last_power) integrated = 0.5 * (power->value() + last_power->value()) * dt_s;
    double counter = integrated;  // a reset interval falls back to the integral
    if (s.energy_counter && last_->energy_counter) {
      counter_seen_ = true;
      const double delta = (*s.energy_counter - *last_->energy_counter).value();
      if (delta < 0) {
        ++counter_resets_;
      } else {
        counter = delta;
        if (delta == 0) ++counter_unchanged_;
        if (delta > 0) {
          if (last_counter_change_) counter_change_gaps_.push_back(s.time - *last_counter_change_);
          last_counter_change_ = s.time;
        }
      }
    }
    for (Accumulator* acc : {&total_, phase_.empty() ? nullptr : &Current()}) {
      if (acc == nullptr) continue;
      acc->duration += dt;
      acc->integrated_j += integrated;
      acc->counter_j += counter;
    }
    const std::uint64_t reasons = last_->throttle_reasons.value_or(0);
    if (reasons & gpu::kThrottleSwPowerCap) capped_ += dt;
    if (reasons & ~static_cast<std::uint64_t>(gpu::kThrottleGpuIdle)) throttled_ += dt;
  }
  last_ = s;
}

EnergyReport EnergyMeter::Report() const {
  EnergyReport r;
  r.duration = total_.duration;
  r.samples = samples_;
  r.driver_samples = driver_samples_;
  r.peak_power = peak_;
  r.time_power_capped = capped_;
  r.time_throttled = throttled_;
  r.counter_resets = counter_resets_;
  r.power_reading = power_reading_;
  if (!power_reading_.empty()) r.integrated_energy = core::Joules(total_.integrated_j);
  const bool counter_usable = counter_seen_ && !counter_missing_;
  if (counter_usable) r.counter_energy = core::Joules(total_.counter_j);
  if (!counter_change_gaps_.empty()) {
    std::vector<core::Duration> gaps = counter_change_gaps_;
    std::nth_element(gaps.begin(), gaps.begin() + gaps.size() / 2, gaps.end());
    r.counter_update_period = gaps[gaps.size() / 2];
    r.counter_update_period_is_upper_bound = counter_unchanged_ == 0;
  }
  if (r.counter_energy && r.integrated_energy && r.counter_energy->value() > 0) {
    r.disagreement = std::abs(r.counter_energy->value() - r.integrated_energy->value()) /
                     r.counter_energy->value();
  }
  if (counter_usable && r.duration >= kMinCounterWindow && total_.counter_j > 0) {
    r.source = EnergySource::kCounter;
    r.energy = *r.counter_energy;
  } else if (r.integrated_energy) {
    r.source = EnergySource::kIntegrated;
    r.energy = *r.integrated_energy;
    if (!counter_usable) {
      r.source_note = "no energy counter on this GPU";
    } else {
      r.source_note = "window shorter than the energy counter can resolve (under 1 s)";
    }
  } else if (counter_usable) {
    r.source = EnergySource::kCounter;
    r.energy = *r.counter_energy;
    r.source_note = "no power reading to cross-check";
  } else {
    r.source_note = "neither an energy counter nor a power reading";
  }
  if (r.duration.count() > 0)
    r.average_power = core::AveragePower(r.energy, core::ToSeconds(r.duration));
  return r;
}

std::vector<PhaseEnergy> EnergyMeter::Phases() const {
  const bool counter = Report().source == EnergySource::kCounter;
  std::vector<PhaseEnergy> out;
  for (const std::string& name : phase_order_) {
    const Accumulator& acc = phases_.at(name);
    out.push_back({.name = name,
                   .duration = acc.duration,
                   .energy = core::Joules(counter ? acc.counter_j : acc.integrated_j)});
  }
  return out;
}

}  // namespace headroom::telemetry
