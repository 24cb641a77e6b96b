// What `headroom mig show --profiles` does below its flags: the GPU-instance profiles the driver
// lists for each GPU of a backend (read-only; MIG mode may be off) against the MIG catalog's
// entry for the GPU's type, one row per profile with a verdict. A GPU whose type the catalog
// lacks is compared with an empty entry, every row a mismatch. Not thread-safe (opens the
// backend's devices).
#ifndef HEADROOM_APP_MIG_PROFILES_H_
#define HEADROOM_APP_MIG_PROFILES_H_

#include <functional>
#include <string>
#include <vector>

#include "app/context.h"
#include "core/result.h"
#include "gpu/mig_view.h"

namespace headroom::app {

struct MigProfileCheckRequest {
  std::string catalog_dir = {};  // empty: the built-in catalogs
  BackendOptions backend = {};
  // Each GPU's comparison once read, so that the GPUs before one that cannot be read are shown.
  std::function<void(const gpu::GpuMigProfileCheck&)> on_gpu = {};
};

struct MigProfileCheckResult {
  std::vector<gpu::GpuMigProfileCheck> gpus;
  bool match = true;  // every GPU's profiles agree with the catalog
};

// The backend's errors, or the first GPU's whose profiles cannot be read.
[[nodiscard]] core::Result<MigProfileCheckResult> MigProfileCheck(
    const MigProfileCheckRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_MIG_PROFILES_H_
