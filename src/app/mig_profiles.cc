#include "app/mig_profiles.h"

namespace headroom::app {

core::Result<MigProfileCheckResult> MigProfileCheck(const MigProfileCheckRequest& request) {
  core::SystemClock clock;
  HEADROOM_ASSIGN_OR_RETURN(const DeviceSet set,
                            OpenDevices(request.catalog_dir, request.backend, &clock));
  const gpu::MigSpecLookup lookup = MigSpecLookupOf(request.catalog_dir);
  MigProfileCheckResult result{.gpus = {}};
  for (const auto& device : set.devices) {
    HEADROOM_ASSIGN_OR_RETURN(gpu::GpuMigProfileCheck check,
                              gpu::CheckDeviceMigProfiles(*device, lookup));
    result.match = result.match && check.mismatches() == 0;
    if (request.on_gpu) request.on_gpu(check);
    result.gpus.push_back(std::move(check));
  }
  return result;
}

}  // namespace headroom::app
