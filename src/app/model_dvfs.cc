#include "app/model_dvfs.h"

#include <vector>

#include "app/context.h"
#include "gpu/sim/burst_probe.h"
#include "model/dvfs_sweep.h"

namespace headroom::app {

core::Result<ModelDvfsResult> ModelDvfs(const ModelDvfsRequest& request) {
  HEADROOM_ASSIGN_OR_RETURN(const catalog::HardwareCatalog hardware,
                            LoadCatalog(request.catalog_dir));
  auto spec = hardware.Gpu(request.gpu);
  if (!spec) return core::Fail(spec.error().WithContext("--gpu"));
  auto gpu = std::make_unique<const model::GpuSpec>(**spec);
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<core::Megahertz> clocks,
                            request.sm_clocks.empty() ? core::Result<std::vector<core::Megahertz>>(
                                                            model::DefaultSweepClocks(*gpu))
                                                      : ParseClockList(request.sm_clocks, *gpu));
  HEADROOM_ASSIGN_OR_RETURN(
      const std::vector<core::Watts> limits,
      request.power_limits.empty()
          ? core::Result<std::vector<core::Watts>>(model::DefaultSweepLimits(*gpu))
          : ParsePowerLimitList(request.power_limits, *gpu));
  const model::GpuPowerModel model(*gpu);
  report::DvfsCharacterization characterization{
      .gpu = gpu.get(),
      .clock_rows = model::SweepClocks(model, clocks),
      .limit_rows = model::SweepPowerLimits(model, limits),
      .burst = gpu::sim::CompareCapAndLock(*gpu)};
  return ModelDvfsResult{.gpu = std::move(gpu), .characterization = std::move(characterization)};
}

}  // namespace headroom::app
