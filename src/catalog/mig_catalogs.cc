#include "catalog/mig_catalogs.h"

#include "catalog/mig_plan_file.h"

namespace headroom::catalog {

core::Result<MigCatalogs> MigCatalogs::Load(HardwareCatalog hardware) {
  HEADROOM_ASSIGN_OR_RETURN(MigCatalog mig, MigCatalog::Embedded());
  HEADROOM_ASSIGN_OR_RETURN(MigTrainingCatalog workloads, MigTrainingCatalog::Embedded());
  HEADROOM_ASSIGN_OR_RETURN(const model::GpuSpec* reference,
                            hardware.Gpu(workloads.reference_gpu()));
  const model::GpuSpec reference_spec = *reference;
  return MigCatalogs{.hardware = std::move(hardware),
                     .mig = std::move(mig),
                     .workloads = std::move(workloads),
                     .reference = reference_spec};
}

core::Result<mig::SliceModel> MigCatalogs::Model(std::string_view gpu,
                                                 std::optional<double> power_limit_w) const {
  return MakeSliceModel(gpu, power_limit_w, hardware, mig, workloads);
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

}  // namespace headroom::catalog
