// Steady-state characterization of one GPU type from the power model: power, time and energy of
// reference prefill-like and decode-like phases across SM clocks and across power limits. Pure.
#ifndef HEADROOM_MODEL_DVFS_SWEEP_H_
#define HEADROOM_MODEL_DVFS_SWEEP_H_

#include <vector>

#include "core/units.h"
#include "model/gpu_power_model.h"

namespace headroom::model {

struct PhaseOutcome {
  core::Megahertz clock{0};
  core::Watts power{0};
  double time_s = 0;
  core::Joules energy{0};
  double slowdown = 0;    // time / time at the maximum clock - 1
  double power_cut = 0;   // 1 - power / power at the maximum clock
  double energy_rel = 1;  // energy / energy at the maximum clock
};

struct SweepRow {
  core::Megahertz clock{0};  // the clock lock (clock sweep)
  core::Watts limit{0};      // the power limit (limit sweep)
  PhaseOutcome prefill;
  PhaseOutcome decode;
};

// One row per clock, each phase run at that clock.
std::vector<SweepRow> SweepClocks(const GpuPowerModel& model,
                                  const std::vector<core::Megahertz>& clocks);
// One row per limit, each phase at the highest clock that fits under it.
std::vector<SweepRow> SweepPowerLimits(const GpuPowerModel& model,
                                       const std::vector<core::Watts>& limits);

// What `model dvfs` sweeps when not told: 60% to 100% of the maximum clock in about 8 steps
// (multiples of 5 clock steps), and the settable power-limit range in about 6 (multiples of
// 25 W), highest first.
std::vector<core::Megahertz> DefaultSweepClocks(const GpuSpec& spec);
std::vector<core::Watts> DefaultSweepLimits(const GpuSpec& spec);

}  // namespace headroom::model

#endif  // HEADROOM_MODEL_DVFS_SWEEP_H_
