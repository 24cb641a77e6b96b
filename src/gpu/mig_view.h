// What `mig show` and `mig show --profiles` read of one GPU: its MIG mode and instances in the
// MIG catalog's terms (GpuMigView), or the driver's GPU-instance profiles beside the catalog's
// (GpuMigProfileCheck). The catalog entry arrives through a lookup, because the catalog lies
// above gpu/. Reads the device; thread-compatible.
#ifndef HEADROOM_GPU_MIG_VIEW_H_
#define HEADROOM_GPU_MIG_VIEW_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "gpu/device.h"
#include "gpu/mig_profile_check.h"
#include "mig/profile.h"

namespace headroom::gpu {

// The MIG catalog's entry for a device's type, or why there is none (naming the GPU).
using MigSpecLookup = std::function<core::Result<mig::GpuMigSpec>(const Device&)>;

struct GpuMigView {
  DeviceInfo info = {};
  std::string type = {};                        // the catalog type, or "unknown"
  std::optional<MigModeState> mode = {};        // absent: no MIG on this GPU or backend
  std::string no_mig_reason = {};               // why, when `mode` is absent
  std::vector<MigGpuInstance> instances = {};   // only with MIG mode on
  std::vector<std::string> profile_names = {};  // the catalog's, per instance
  std::string layout = {};                      // canonical text; "" without instances
};

// A backend without MIG (kUnimplemented) gives a view without mode; any other error is the
// device's or the lookup's. The catalog is consulted only when MIG mode is on.
[[nodiscard]] core::Result<GpuMigView> ReadMigView(Device& device, const MigSpecLookup& lookup);

struct GpuMigProfileCheck {
  DeviceInfo info = {};
  std::optional<MigModeState> mode = {};    // absent when the driver would not say
  std::optional<std::string> catalog = {};  // the MIG-catalog entry compared with
  std::string no_catalog_reason = {};       // the lookup's error, when `catalog` is absent
  std::vector<MigProfileComparison> rows = {};

  int mismatches() const;
};

// The driver's profiles (an error reading them is the result) against the catalog's entry; a GPU
// the lookup fails for is compared with an empty entry named "none", so every row differs.
[[nodiscard]] core::Result<GpuMigProfileCheck> CheckDeviceMigProfiles(Device& device,
                                                                      const MigSpecLookup& lookup);

}  // namespace headroom::gpu

#endif  // HEADROOM_GPU_MIG_VIEW_H_
