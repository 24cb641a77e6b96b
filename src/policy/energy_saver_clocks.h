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

// One step of the saver's ladder, as a share of the highest clock (issue 51's brief: steps of
// about 5% of the max): 75 MHz on an A100 (1410 MHz, a 15 MHz grid), 105 MHz on an H100 (1980
// MHz). Coarse enough that each step changes the engine's latencies by enough for its next window
// to show it, fine enough that a breach costs one step; not tuned by measurement yet.
inline constexpr double kEnergySaverStepShare = 0.05;
// The default floor, as a share of the highest clock (issue 51's brief: 50% of the max): a bound
// on how far the saver may go on a wrong signal, not a claim about where the energy per token
// bottoms out; `--energy-saver-floor-percent` sets another.
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
