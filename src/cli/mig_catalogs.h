// The three catalogs the MIG model commands (`mig workloads`, `plan`, `characterize`) read: the
// hardware catalog (or --catalog-dir), the MIG profiles and the measured training workloads,
// with the workloads' reference GPU. Not thread-safe (CLI start-up).
#ifndef HEADROOM_CLI_MIG_CATALOGS_H_
#define HEADROOM_CLI_MIG_CATALOGS_H_

#include <optional>
#include <string>
#include <vector>

#include "catalog/hardware_catalog.h"
#include "catalog/mig_catalog.h"
#include "catalog/mig_training_catalog.h"
#include "cli/common.h"
#include "core/result.h"
#include "gpu/mig_view.h"
#include "mig/slice_model.h"
#include "mig/training_workload.h"

namespace headroom::cli {

struct MigCatalogs {
  catalog::HardwareCatalog hardware;
  catalog::MigCatalog mig;
  catalog::MigTrainingCatalog workloads;
  model::GpuSpec reference;  // the GPU the workloads were measured on

  [[nodiscard]] core::Result<mig::WorkloadFit> Fit(const mig::MeasuredWorkload& w) const {
    return mig::FitWorkload(w, reference, workloads.reference_idle_w());
  }
  // Fit(w) of each workload, in order; the first error.
  [[nodiscard]] core::Result<std::vector<mig::WorkloadFit>> Fits(
      const std::vector<mig::MeasuredWorkload>& ws) const;
  // `gpu` at `power_limit_w` (its default when nullopt); errors name --gpu or --power-limit.
  [[nodiscard]] core::Result<mig::SliceModel> Model(const std::string& gpu,
                                                    std::optional<double> power_limit_w) const;
};

[[nodiscard]] core::Result<MigCatalogs> LoadMigCatalogs(const GlobalOptions& global);

// MigSpecOfDevice as the lookup gpu/mig_view asks; `global` must outlive it.
gpu::MigSpecLookup MigSpecLookupOf(const GlobalOptions& global);

}  // namespace headroom::cli

#endif  // HEADROOM_CLI_MIG_CATALOGS_H_
