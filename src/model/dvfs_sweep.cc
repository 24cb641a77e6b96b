#include "model/dvfs_sweep.h"

#include <algorithm>
#include <cmath>

namespace headroom::model {
namespace {

PhaseOutcome Evaluate(const GpuPowerModel& model, const Phase& phase, core::Megahertz f) {
  const core::Megahertz f_max = model.spec().sm_clock_max;
  const double t_max = model.Time(phase, f_max).time_s;
  const core::Watts p_max = model.PhasePower(phase, f_max);
  PhaseOutcome out;
  out.clock = f;
  out.power = model.PhasePower(phase, f);
  out.time_s = model.Time(phase, f).time_s;
  out.energy = core::EnergyOver(out.power, out.time_s);
  out.slowdown = out.time_s / t_max - 1.0;
  out.power_cut = 1.0 - out.power / p_max;
  out.energy_rel = out.energy / core::EnergyOver(p_max, t_max);
  return out;
}

}  // namespace

std::vector<SweepRow> SweepClocks(const GpuPowerModel& model,
                                  const std::vector<core::Megahertz>& clocks) {
  std::vector<SweepRow> rows;
  for (core::Megahertz f : clocks) {
    rows.push_back({.clock = f,
                    .prefill = Evaluate(model, PrefillLikePhase(), f),
                    .decode = Evaluate(model, DecodeLikePhase(), f)});
  }
  return rows;
}

std::vector<SweepRow> SweepPowerLimits(const GpuPowerModel& model,
                                       const std::vector<core::Watts>& limits) {
  std::vector<SweepRow> rows;
  const core::Megahertz f_max = model.spec().sm_clock_max;
  for (core::Watts limit : limits) {
    const Phase prefill = PrefillLikePhase();
    const Phase decode = DecodeLikePhase();
    rows.push_back(
        {.limit = limit,
         .prefill = Evaluate(model, prefill, model.MaxClockUnder(limit, prefill, 1.0, f_max)),
         .decode = Evaluate(model, decode, model.MaxClockUnder(limit, decode, 1.0, f_max))});
  }
  return rows;
}

namespace {

// `count` evenly spaced values from lo to hi, spaced by a multiple of `grain`, highest first.
std::vector<double> Spread(double lo, double hi, int count, double grain) {
  const double step = std::max(grain, std::round((hi - lo) / count / grain) * grain);
  std::vector<double> values;
  for (double v = hi; v >= lo - 1e-9; v -= step) values.push_back(v);
  return values;
}

}  // namespace

std::vector<core::Megahertz> DefaultSweepClocks(const GpuSpec& spec) {
  std::vector<core::Megahertz> clocks;
  for (double v : Spread(spec.sm_clock_max.value() * 0.6, spec.sm_clock_max.value(), 8,
                         spec.sm_clock_step.value() * 5)) {
    clocks.push_back(spec.SnapClock(core::Megahertz(v)));
  }
  return clocks;
}

std::vector<core::Watts> DefaultSweepLimits(const GpuSpec& spec) {
  std::vector<core::Watts> limits;
  for (double v : Spread(spec.power_limit_min.value(), spec.power_limit_max.value(), 6, 25)) {
    limits.emplace_back(v);
  }
  return limits;
}

}  // namespace headroom::model
