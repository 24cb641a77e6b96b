// The three catalogs the MIG slice model reads (`mig workloads`, `plan`, `characterize`): the
// hardware catalog, the MIG profiles and the measured training workloads, with the GPU the
// workloads were measured on. Immutable once loaded; thread-safe.
#ifndef HEADROOM_CATALOG_MIG_CATALOGS_H_
#define HEADROOM_CATALOG_MIG_CATALOGS_H_

#include <optional>
#include <string_view>
#include <vector>

#include "catalog/hardware_catalog.h"
#include "catalog/mig_catalog.h"
#include "catalog/mig_training_catalog.h"
#include "core/result.h"
#include "mig/slice_model.h"
#include "mig/training_workload.h"

namespace headroom::catalog {

struct MigCatalogs {
  HardwareCatalog hardware;
  MigCatalog mig;
  MigTrainingCatalog workloads;
  model::GpuSpec reference;  // the GPU the workloads were measured on

  // The embedded MIG and workload catalogs beside `hardware`; kNotFound when `hardware` lacks
  // the workloads' reference GPU.
  [[nodiscard]] static core::Result<MigCatalogs> Load(HardwareCatalog hardware);

  [[nodiscard]] core::Result<mig::WorkloadFit> Fit(const mig::MeasuredWorkload& w) const {
    return mig::FitWorkload(w, reference, workloads.reference_idle_w());
  }
  // Fit(w) of each workload, in order; the first error.
  [[nodiscard]] core::Result<std::vector<mig::WorkloadFit>> Fits(
      const std::vector<mig::MeasuredWorkload>& ws) const;
  // MakeSliceModel of `gpu` at `power_limit_w` (its default when nullopt): kOutOfRange for the
  // limit, another error for the GPU.
  [[nodiscard]] core::Result<mig::SliceModel> Model(std::string_view gpu,
                                                    std::optional<double> power_limit_w) const;
};

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_MIG_CATALOGS_H_
