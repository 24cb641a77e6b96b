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

}  // namespace headroom::gpu::sim

#endif  // HEADROOM_GPU_SIM_BURST_PROBE_H_
