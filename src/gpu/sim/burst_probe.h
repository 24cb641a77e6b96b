// Runs a simulated GPU through a short load and records what its true power did, to show how
// the power limit (reactive) and a clock lock (proactive) treat a burst. Thread-safe (no state).
#ifndef HEADROOM_GPU_SIM_BURST_PROBE_H_
#define HEADROOM_GPU_SIM_BURST_PROBE_H_

#include <optional>

#include "core/time.h"
#include "core/units.h"
#include "gpu/device.h"
#include "gpu/sim/load_script.h"
#include "model/gpu_spec.h"

namespace headroom::gpu::sim {

struct BurstResponse {
  core::Watts peak{0};
  core::Watts mean{0};
  core::Duration above_limit{0};  // time spent above `limit` (when one was given)
};

// REQUIRES: limit within the GPU's settable range; lock within its clock range.
BurstResponse ProbeBurst(const model::GpuSpec& spec, const LoadScript& script,
                         std::optional<core::Watts> limit, std::optional<ClockLock> lock,
                         core::Duration duration);

// The comparison `model dvfs` draws: a prefill burst from idle under a power cap at POLCA's T1
// level (75% of TDP, brief §3) against the same burst with the clock locked at the highest clock
// that holds steady prefill under that cap.
struct CapVersusLock {
  core::Duration burst{0};
  core::Watts cap{0};
  core::Megahertz lock{0};
  BurstResponse capped = {};
  BurstResponse locked = {};
};
CapVersusLock CompareCapAndLock(const model::GpuSpec& spec);

}  // namespace headroom::gpu::sim

#endif  // HEADROOM_GPU_SIM_BURST_PROBE_H_
