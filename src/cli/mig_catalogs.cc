#include "cli/mig_catalogs.h"

#include "catalog/mig_plan_file.h"

namespace headroom::cli {

core::Result<mig::SliceModel> MigCatalogs::Model(const std::string& gpu,
                                                 std::optional<double> power_limit_w) const {
  auto model = catalog::MakeSliceModel(gpu, power_limit_w, hardware, mig, workloads);
  if (!model) {
    return core::Fail(model.error().WithContext(
        model.error().code() == core::Code::kOutOfRange ? "--power-limit" : "--gpu"));
  }
  return model;
}

core::Result<std::vector<mig::WorkloadFit>> MigCatalogs::Fits(
    const std::vector<mig::MeasuredWorkload>& ws) const {
  std::vector<mig::WorkloadFit> fits;
  for (const mig::MeasuredWorkload& w : ws) {
    HEADROOM_ASSIGN_OR_RETURN(mig::WorkloadFit fit, Fit(w));
    fits.push_back(std::move(fit));
  }
  return fits;
}

core::Result<MigCatalogs> LoadMigCatalogs(const GlobalOptions& global) {
  HEADROOM_ASSIGN_OR_RETURN(catalog::HardwareCatalog hardware, LoadCatalog(global));
  HEADROOM_ASSIGN_OR_RETURN(catalog::MigCatalog mig, catalog::MigCatalog::Embedded());
  HEADROOM_ASSIGN_OR_RETURN(catalog::MigTrainingCatalog workloads,
                            catalog::MigTrainingCatalog::Embedded());
  HEADROOM_ASSIGN_OR_RETURN(const model::GpuSpec* reference,
                            hardware.Gpu(workloads.reference_gpu()));
  const model::GpuSpec reference_spec = *reference;
  return MigCatalogs{.hardware = std::move(hardware),
                     .mig = std::move(mig),
                     .workloads = std::move(workloads),
                     .reference = reference_spec};
}

gpu::MigSpecLookup MigSpecLookupOf(const GlobalOptions& global) {
  return [&global](const gpu::Device& device) { return MigSpecOfDevice(global, device); };
}

}  // namespace headroom::cli
