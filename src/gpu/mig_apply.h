// Reading a Device's MIG instances in the MIG catalog's terms, and applying a layout to it: the
// plan of mig/apply_plan carried out step by step, rolled back to the original instances on the
// first failure. Thread-compatible; the device must not be reconfigured by anyone else meanwhile.
#ifndef HEADROOM_GPU_MIG_APPLY_H_
#define HEADROOM_GPU_MIG_APPLY_H_

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "gpu/device.h"
#include "mig/apply_plan.h"
#include "mig/layout.h"
#include "mig/profile.h"

namespace headroom::gpu {

// The device's GPU instances with profile names from `spec`; kInvalidArgument naming the
// profile ID when the catalog lacks one.
[[nodiscard]] core::Result<std::vector<mig::GpuInstanceState>> ToMigState(
    const mig::GpuMigSpec& spec, const std::vector<MigGpuInstance>& instances);

// Reads the device's instances (MigInstances) as above.
[[nodiscard]] core::Result<std::vector<mig::GpuInstanceState>> ReadMigState(
    Device& device, const mig::GpuMigSpec& spec);

struct MigApplyOptions {
  bool dry_run = false;  // plan only; change nothing
  bool force = false;    // go ahead while compute processes run (the driver may still refuse)
};

struct MigApplyReport {
  std::string before = {};  // the layout found, canonical text ("" when none)
  mig::ApplyPlan plan = {};
  std::vector<mig::ApplyStep> done = {};  // the plan's steps carried out, in order
  // The step that failed: "<step> failed: <the backend's error>" with the backend's code.
  std::optional<core::Error> error = {};
  std::vector<mig::ApplyStep> rollback = {};       // undo steps carried out after a failure
  std::optional<core::Error> rollback_error = {};  // why the rollback stopped short, if it did
  std::string after = {};  // the layout read back at the end (== before after a full rollback)

  bool ok() const { return !error.has_value(); }
};

// Applies `target` to the device. Refusals change nothing and are errors: an invalid layout
// (kInvalidArgument naming the instance), MIG mode off (kFailedPrecondition saying how to turn
// it on), compute processes running without options.force (kFailedPrecondition listing them),
// any error reading the device. Once steps run, the result is a report: on a failed step the
// steps done so far are undone (instances created are destroyed, destroyed ones recreated with
// their placements and compute instances), and `error` says which step failed and why.
[[nodiscard]] core::Result<MigApplyReport> ApplyMigLayout(Device& device,
                                                          const mig::GpuMigSpec& spec,
                                                          const mig::Layout& target,
                                                          const MigApplyOptions& options);

}  // namespace headroom::gpu

#endif  // HEADROOM_GPU_MIG_APPLY_H_
