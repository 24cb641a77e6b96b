// EnergySaverClocks: the clocks the energy saver (energy_saver.h) may choose on a GPU: the
// driver's supported SM clocks within the GPU type's catalog range, from its highest down to a
// floor, thinned to steps of about 5% of the highest so that each step down changes the
// latencies enough for the engine's next window to show it. Pure.
#ifndef HEADROOM_POLICY_ENERGY_SAVER_CLOCKS_H_
#define HEADROOM_POLICY_ENERGY_SAVER_CLOCKS_H_

#include <vector>

#include "core/result.h"
#include "core/units.h"
#include "model/gpu_spec.h"

namespace headroom::policy {

// One step of the saver's ladder, as a share of the highest clock: ~70 MHz on an A100 (1410
// MHz), ~100 MHz on an H100 (1980 MHz); the DVFS curve's energy per token changes by a few % per
// such step (docs/power-model.md), and a finer step would take the saver minutes of settling to
// cross a range the engine's latencies barely tell apart.
inline constexpr double kEnergySaverStepShare = 0.05;
// The default floor, as a share of the highest clock: below about half its clock a decode step
// of today's models turns compute-bound and its energy per token rises again (the POLCA study's
// clock sweep bottoms out between 50 and 70 %).
inline constexpr double kEnergySaverFloorShare = 0.5;

// `supported` (the driver's list, any order) kept within [spec.sm_clock_min, spec.sm_clock_max]
// and at or above floor_share of the highest kept, highest first, each at least
// kEnergySaverStepShare of the highest below the one before. kInvalidArgument when floor_share is
// outside (0, 1] or no supported clock lies in the range.
[[nodiscard]] core::Result<std::vector<core::Megahertz>> EnergySaverClocks(
    const std::vector<core::Megahertz>& supported, const model::GpuSpec& spec,
    double floor_share = kEnergySaverFloorShare);

}  // namespace headroom::policy

#endif  // HEADROOM_POLICY_ENERGY_SAVER_CLOCKS_H_
