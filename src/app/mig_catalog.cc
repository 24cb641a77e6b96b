#include "app/mig_catalog.h"

#include <optional>

#include "app/context.h"
#include "catalog/mig_catalogs.h"
#include "mig/enumerate.h"

namespace headroom::app {

core::Result<mig::GpuMigSpec> MigProfiles(const MigGpuRequest& request) {
  return FindMigGpu(request.catalog_dir, request.gpu);
}

core::Result<MigValidateResult> MigValidate(const MigValidateRequest& request) {
  HEADROOM_ASSIGN_OR_RETURN(mig::GpuMigSpec spec, FindMigGpu(request.catalog_dir, request.gpu));
  HEADROOM_ASSIGN_OR_RETURN(mig::Layout layout, mig::ParseLayout(request.layout));
  MigValidateResult result{.spec = std::move(spec), .layout = std::move(layout)};
  if (auto valid = mig::ValidateLayout(result.spec, result.layout); !valid) {
    result.violation = valid.error().message();
  }
  return result;
}

core::Result<MigLayoutsResult> MigLayouts(const MigLayoutsRequest& request) {
  HEADROOM_ASSIGN_OR_RETURN(mig::GpuMigSpec found, FindMigGpu(request.catalog_dir, request.gpu));
  MigLayoutsResult result{.spec = std::make_unique<const mig::GpuMigSpec>(std::move(found)),
                          .profiles = {},
                          .layouts = {}};
  auto profiles = mig::ProfilesNamed(*result.spec, request.profiles);
  if (!profiles) return core::Fail(profiles.error().WithContext("--profiles"));
  result.profiles = std::move(*profiles);
  result.layouts = mig::EnumerateMaximalLayouts(*result.spec, result.profiles);
  return result;
}

core::Result<MigWorkloadsResult> MigWorkloads(const MigGpuRequest& request) {
  HEADROOM_ASSIGN_OR_RETURN(const catalog::MigCatalogs catalogs,
                            LoadMigCatalogs(request.catalog_dir));
  HEADROOM_ASSIGN_OR_RETURN(const mig::SliceModel model,
                            MigModelOf(catalogs, request.gpu, std::nullopt));
  const std::vector<mig::MeasuredWorkload>& workloads = catalogs.workloads.workloads();
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<mig::WorkloadFit> fits, catalogs.Fits(workloads));
  return MigWorkloadsResult{.summary = mig::SummarizeWorkloads(model, workloads, fits),
                            .reference_gpu = catalogs.workloads.reference_gpu()};
}

}  // namespace headroom::app
