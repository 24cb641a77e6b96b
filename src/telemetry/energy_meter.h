// EnergyMeter: the energy, power and throttling of one GPU over a measurement, from snapshots fed
// in time order. Energy done right (nvml.md §5): differences of the driver's energy counter when
// the window is long enough for its coarse updates, else the integral of power; both are kept,
// with their disagreement, the counter's inferred update period and any counter resets, so every
// figure says where it came from. Energy can be split into named phases. Thread-compatible.
#ifndef HEADROOM_TELEMETRY_ENERGY_METER_H_
#define HEADROOM_TELEMETRY_ENERGY_METER_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/time.h"
#include "core/units.h"
#include "gpu/snapshot.h"

namespace headroom::telemetry {

enum class EnergySource { kCounter, kIntegrated, kNone };
// Inline so that what reads a result names its source without linking the meter.
inline std::string EnergySourceName(EnergySource source) {
  switch (source) {
    case EnergySource::kCounter:
      return "counter";
    case EnergySource::kIntegrated:
      return "integrated";
    case EnergySource::kNone:
      return "none";
  }
  return "none";
}

struct EnergyReport {
  core::Joules energy{0};
  EnergySource source = EnergySource::kNone;
  // Why the counter was not used, when it was not (empty otherwise).
  std::string source_note;
  std::optional<core::Joules> counter_energy;
  std::optional<core::Joules> integrated_energy;
  std::optional<double> disagreement;  // |counter - integrated| / counter
  // Median time between observed counter changes. When every sample saw a change, the counter
  // updates at least as often as we sampled, and this is only an upper bound.
  std::optional<core::Duration> counter_update_period;
  bool counter_update_period_is_upper_bound = false;
  int counter_resets = 0;
  std::string power_reading;  // which reading was integrated: "instant" or "1s-average"
  core::Duration duration{0};
  core::Watts average_power{0};  // energy / duration
  core::Watts peak_power{0};     // highest reading seen, driver samples included
  int driver_samples = 0;        // readings drained from the driver's power sample ring
  core::Duration time_power_capped{0};
  core::Duration time_throttled{0};  // any reason but idle
  int samples = 0;
};

struct PhaseEnergy {
  std::string name;
  core::Duration duration{0};
  core::Joules energy{0};  // by the same source as the whole measurement
};

class EnergyMeter {
 public:
  // Adds a snapshot. REQUIRES: snapshots arrive in non-decreasing time order.
  void Add(const gpu::DeviceSnapshot& snapshot);
  // Starts attributing energy to `phase` from `time` on (the phase before it ends there).
  void MarkPhase(const std::string& phase);
  // A reading from the driver's power sample ring: counts toward the peak, which a coarse poll
  // alone would miss (sub-second prefill spikes).
  void AddDriverSample(core::Watts power);

  EnergyReport Report() const;
  // Phases in the order they first appeared; empty when no phase was ever marked.
  std::vector<PhaseEnergy> Phases() const;

 private:
  struct Accumulator {
    core::Duration duration{0};
    double counter_j = 0;
    double integrated_j = 0;
  };
  Accumulator& Current();

  std::optional<gpu::DeviceSnapshot> last_;
  std::optional<core::TimePoint> first_time_;
  Accumulator total_;
  bool counter_seen_ = false;
  bool counter_missing_ = false;
  int counter_resets_ = 0;
  std::optional<core::TimePoint> last_counter_change_;
  std::vector<core::Duration> counter_change_gaps_;
  int counter_unchanged_ = 0;  // sample intervals in which the counter did not move
  std::string power_reading_;
  core::Watts peak_{0};
  core::Duration capped_{0};
  core::Duration throttled_{0};
  int samples_ = 0;
  int driver_samples_ = 0;

  std::string phase_;
  std::vector<std::string> phase_order_;
  std::map<std::string, Accumulator> phases_;
};

}  // namespace headroom::telemetry

#endif  // HEADROOM_TELEMETRY_ENERGY_METER_H_
