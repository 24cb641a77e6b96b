#include "sim/training_verdict.h"

#include <algorithm>

#include <fmt/format.h>

namespace headroom::sim {

std::vector<BrokenLimit> LimitsBroken(const TrainingLimits& limits, const TrainingRowRun& run) {
  std::vector<BrokenLimit> out;
  const double ramp = std::max(run.ramp_up_window_w_per_s, run.ramp_down_window_w_per_s);
  if (limits.max_ramp_w_per_s && ramp > *limits.max_ramp_w_per_s) {
    out.push_back({"ramp", fmt::format("ramp {:.1f} kW/s > {:.1f} kW/s", ramp / 1e3,
                                       *limits.max_ramp_w_per_s / 1e3)});
  }
  auto band = [&out](const BandSwing& b, const char* label, const std::optional<double>& share,
                     const std::optional<double>& amplitude_w) {
    if (share && b.share > *share) {
      out.push_back(
          {fmt::format("{} share", label),
           fmt::format("{} share {:.1f}% > {:.1f}%", label, 100 * b.share, 100 * *share)});
    }
    if (amplitude_w && b.amplitude_w > *amplitude_w) {
      out.push_back({fmt::format("{} amplitude", label),
                     fmt::format("{} amplitude {:.1f} kW > {:.1f} kW", label, b.amplitude_w / 1e3,
                                 *amplitude_w / 1e3)});
    }
  };
  band(run.low_band, "0.1-2 Hz", limits.max_low_band_share, limits.max_low_band_amplitude_w);
  band(run.high_band, "3-30 Hz", limits.max_high_band_share, limits.max_high_band_amplitude_w);
  return out;
}

void Judge(TrainingRowVerdict& v) {
  const TrainingRowRun& base = v.outcomes.front().run;
  for (MitigationOutcome& o : v.outcomes) {
    const double rate = base.iterations_per_hour();
    const double energy = base.energy_per_iteration_j();
    o.throughput_change = rate > 0 ? o.run.iterations_per_hour() / rate - 1 : 0;
    o.energy_change = energy > 0 ? o.run.energy_per_iteration_j() / energy - 1 : 0;
    o.broken = LimitsBroken(v.scenario.limits, o.run);
  }
  for (std::size_t i = 0; i < v.outcomes.size(); ++i) {
    const MitigationOutcome& o = v.outcomes[i];
    if (!o.within()) continue;
    if (!v.chosen) {
      v.chosen = i;
      continue;
    }
    const MitigationOutcome& best = v.outcomes[*v.chosen];
    if (o.throughput_change > best.throughput_change ||
        (o.throughput_change == best.throughput_change && o.energy_change < best.energy_change)) {
      v.chosen = i;
    }
  }
  if (v.chosen) return;
  // A limit is unmet when every mitigation breaks it.
  for (const BrokenLimit& broken : v.outcomes.front().broken) {
    const bool everywhere = std::all_of(v.outcomes.begin(), v.outcomes.end(), [&](const auto& o) {
      return std::any_of(o.broken.begin(), o.broken.end(),
                         [&](const BrokenLimit& b) { return b.limit == broken.limit; });
    });
    if (everywhere) v.unmet.push_back(broken.limit);
  }
  if (v.unmet.empty()) v.unmet.push_back("every limit at once (each is met by some mitigation)");
}

}  // namespace headroom::sim
