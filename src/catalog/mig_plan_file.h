// The input of `headroom mig plan`: a YAML file naming a GPU type and a set of training jobs
// (docs/mig.md, "Planning"), resolved against the catalogs into a SliceModel and a PlanRequest.
// Errors name the file, line and field. Thread-compatible.
#ifndef HEADROOM_CATALOG_MIG_PLAN_FILE_H_
#define HEADROOM_CATALOG_MIG_PLAN_FILE_H_

#include <optional>
#include <string>
#include <string_view>

#include "catalog/hardware_catalog.h"
#include "catalog/mig_catalog.h"
#include "catalog/mig_training_catalog.h"
#include "core/result.h"
#include "mig/planner.h"
#include "mig/slice_model.h"

namespace headroom::catalog {

struct MigPlanInput {
  mig::SliceModel model;
  mig::PlanRequest request;
};

// Keys: gpu (required), power_limit_w, objective (energy | makespan), makespan_bound_s,
// profiles (list of profile classes), jobs (list of {name, workload, samples | epochs, batch,
// deadline_s, priority, count}).
[[nodiscard]] core::Result<MigPlanInput> ParseMigPlanFile(std::string_view text,
                                                          const std::string& source,
                                                          const HardwareCatalog& hardware,
                                                          const MigCatalog& mig_catalog,
                                                          const MigTrainingCatalog& workloads);

// The slice model of `gpu` (hardware or MIG catalog name or alias) for the measured workloads,
// at `power_limit_w` (the GPU's default limit when nullopt; kOutOfRange outside its range).
[[nodiscard]] core::Result<mig::SliceModel> MakeSliceModel(std::string_view gpu,
                                                           std::optional<double> power_limit_w,
                                                           const HardwareCatalog& hardware,
                                                           const MigCatalog& mig_catalog,
                                                           const MigTrainingCatalog& workloads);

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_MIG_PLAN_FILE_H_
