// Apply planning: the ordered driver operations that turn a GPU's MIG instances, as read from the
// device, into a target layout. Unwanted compute instances go first, then unwanted GPU instances
// (smallest and last-placed first, the reverse of creation), then the new GPU instances with
// explicit placements, largest first (so that no automatic placement can block a later one;
// ../shared/brief/mig.md), then their compute instances. GPU instances identical in profile,
// placement and compute instances are kept untouched. Pure functions over values; thread-safe.
#ifndef HEADROOM_MIG_APPLY_PLAN_H_
#define HEADROOM_MIG_APPLY_PLAN_H_

#include <string>
#include <vector>

#include "core/result.h"
#include "mig/layout.h"
#include "mig/profile.h"

namespace headroom::mig {

// A compute instance of a GPU instance. `id` is the driver's id; kNoId in a target.
struct ComputeInstanceState {
  static constexpr int kNoId = -1;
  int id = kNoId;
  int compute_slices = 0;

  bool operator==(const ComputeInstanceState&) const = default;
};

// A GPU instance with every compute instance listed explicitly (none listed: a GPU instance
// without compute instances, which a device can hold but a layout text cannot express).
struct GpuInstanceState {
  int id = ComputeInstanceState::kNoId;  // the driver's GPU-instance id; kNoId in a target
  std::string profile = {};              // profile name, e.g. "3g.40gb"
  int start = 0;                         // first memory slice of the placement
  std::vector<ComputeInstanceState> compute_instances = {};

  bool operator==(const GpuInstanceState&) const = default;
};

// The explicit form of `layout`: a GPU instance written without compute instances gets one over
// all its compute slices. REQUIRES: ValidateLayout(spec, layout) passed.
std::vector<GpuInstanceState> ExpandLayout(const GpuMigSpec& spec, const Layout& layout);

// The layout text's form of `instances`: a single compute instance over the whole GPU instance
// is left implicit; a GPU instance without compute instances is written "/0c" (which
// ValidateLayout rejects, since apply cannot create one). Unknown profiles keep their name.
Layout ToLayout(const GpuMigSpec& spec, const std::vector<GpuInstanceState>& instances);

struct ApplyStep {
  enum class Kind {
    kDestroyComputeInstance,
    kDestroyGpuInstance,
    kCreateGpuInstance,
    kCreateComputeInstance,
  };
  Kind kind = Kind::kCreateGpuInstance;
  std::string profile = {};  // the GPU instance's profile name
  int profile_id = 0;        // its NVML GPU-instance profile ID
  int start = 0;             // its placement; unique among the GPU instances at any step
  // The existing GPU instance's id, or kNoId for one an earlier step creates (found by `start`).
  int gpu_instance_id = ComputeInstanceState::kNoId;
  int compute_instance_id = ComputeInstanceState::kNoId;  // kDestroyComputeInstance only
  int compute_slices = 0;                                 // compute-instance steps only

  bool operator==(const ApplyStep&) const = default;
};

// "destroy compute instance 0 (3c) of 3g.40gb@0", "create 3g.40gb@4", "create 2c compute
// instance in 3g.40gb@4": the object of the step, for plans and error messages.
std::string DescribeStep(const ApplyStep& step);

struct ApplyPlan {
  std::vector<ApplyStep> steps = {};
  std::vector<GpuInstanceState> kept = {};  // current GPU instances left as they are

  bool empty() const { return steps.empty(); }
};

// The steps from `current` (as read from the device) to `target`. A kept GPU instance whose
// compute instances differ keeps its placement: only its compute instances are replaced.
// Errors (kInvalidArgument): a current or target profile the spec lacks; a target that breaks
// a placement rule (ValidateLayout's message).
[[nodiscard]] core::Result<ApplyPlan> PlanTransition(const GpuMigSpec& spec,
                                                     const std::vector<GpuInstanceState>& current,
                                                     const std::vector<GpuInstanceState>& target);

// PlanTransition to a layout, validated first (ValidateLayout's error names the instance).
[[nodiscard]] core::Result<ApplyPlan> PlanApply(const GpuMigSpec& spec,
                                                const std::vector<GpuInstanceState>& current,
                                                const Layout& target);

}  // namespace headroom::mig

#endif  // HEADROOM_MIG_APPLY_PLAN_H_
