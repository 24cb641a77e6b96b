// What `headroom mig show` and `headroom mig apply` do below their flags, on the GPUs of a
// backend (real, fake or simulated) through the Device interface: `show` reads each GPU's MIG
// mode and instances in the catalog's terms; `apply` checks a layout against each GPU's catalog
// entry, plans the changes, runs them and rolls back on failure (gpu/mig_apply), one GPU after
// another, stopping at the first that fails. Each GPU is handed to a callback as soon as it is
// done, so that what happened on the earlier GPUs is shown even when a later one fails.
// Not thread-safe (opens the backend's devices).
#ifndef HEADROOM_APP_MIG_DEVICE_H_
#define HEADROOM_APP_MIG_DEVICE_H_

#include <functional>
#include <string>
#include <vector>

#include "app/context.h"
#include "core/result.h"
#include "gpu/device.h"
#include "gpu/mig_apply.h"
#include "gpu/mig_view.h"

namespace headroom::app {

struct MigShowRequest {
  std::string catalog_dir = {};  // empty: the built-in catalogs
  BackendOptions backend = {};
  std::function<void(const gpu::GpuMigView&)> on_gpu = {};  // each GPU's view once read
};

struct MigShowResult {
  std::string backend;
  std::vector<gpu::GpuMigView> gpus;
};

// The backend's errors, or the first GPU's that cannot be read (the GPUs before it were handed
// to on_gpu).
[[nodiscard]] core::Result<MigShowResult> MigShow(const MigShowRequest& request);

struct MigApplied {
  gpu::DeviceInfo info;
  std::string target;  // the layout applied, canonical text
  gpu::MigApplyReport report;
};

struct MigApplyRequest {
  std::string catalog_dir = {};
  BackendOptions backend = {};
  std::string layout = {};                             // as given: "3g.40gb@0,2g.20gb@4,1g.10gb@6"
  bool dry_run = false;                                // plan only; change nothing
  bool force = false;                                  // go ahead while compute processes run
  std::function<void(const MigApplied&)> on_gpu = {};  // each GPU's outcome once done
};

struct MigApplyResult {
  std::string backend;
  std::vector<MigApplied> gpus;  // when the last one's report is not ok(), the run stopped there
};

// Errors, each ending the run (the GPUs before were handed to on_gpu): the layout's text that
// does not parse, the backend's, a GPU the catalog lacks, kInvalidArgument for a layout the GPU
// cannot hold ("GPU N: invalid layout on TYPE: ..."), and ApplyMigLayout's refusals (running
// compute processes: with the advice to stop them or pass --force). A step that fails is not an
// error: it is the report of the GPU, rolled back.
[[nodiscard]] core::Result<MigApplyResult> MigApply(const MigApplyRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_MIG_DEVICE_H_
