#include "app/model_validate.h"

#include <vector>

#include "catalog/mig_catalog.h"
#include "catalog/model_catalog.h"
#include "catalog/served_runs.h"
#include "catalog/serving_energy_validation.h"
#include "catalog/validation_sets.h"
#include "sim/served_run_replay.h"
#include "sim/token_energy_validation.h"

namespace headroom::app {

core::Result<model::ValidationReport> ModelValidate(const ModelValidateRequest& request) {
  HEADROOM_ASSIGN_OR_RETURN(const catalog::HardwareCatalog hardware,
                            LoadCatalog(request.catalog_dir));
  HEADROOM_ASSIGN_OR_RETURN(const catalog::ModelCatalog models, catalog::ModelCatalog::Embedded());
  HEADROOM_ASSIGN_OR_RETURN(const EngineChoice engines,
                            LoadEngines(request.engine, catalog::kDefaultEngine));
  HEADROOM_ASSIGN_OR_RETURN(const catalog::MigCatalog mig, catalog::MigCatalog::Embedded());
  const catalog::ValidationCatalogs catalogs{&hardware, &models, &engines.engines};
  HEADROOM_ASSIGN_OR_RETURN(
      model::ValidationReport report,
      catalog::ValidateBuiltInSuite(catalogs, mig, request.engine.engine, request.worst));
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<model::Measurement> runs,
                            catalog::EmbeddedServedRuns());
  sim::ScoreServedRunsInSimulator(catalogs, runs, request.engine.engine, request.worst, &report);
  // The agent's J/token attribution on ML.ENERGY's runs, under the engine their energy and time
  // are validated with (catalog::ValidateBuiltInSuite).
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<model::Measurement> energy,
                            catalog::EmbeddedServingEnergyMeasurements());
  HEADROOM_RETURN_IF_ERROR(
      sim::ScoreAttributedTokenEnergy(catalogs, energy, std::string(catalog::kServingEnergyEngine),
                                      request.engine.engine, request.worst, &report));
  return report;
}

}  // namespace headroom::app
