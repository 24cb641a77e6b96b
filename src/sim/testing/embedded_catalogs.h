// The catalogs compiled into the binary, loaded once per test process, for the tests that serve
// validation runs in the row simulator. Test-only.
#ifndef HEADROOM_SIM_TESTING_EMBEDDED_CATALOGS_H_
#define HEADROOM_SIM_TESTING_EMBEDDED_CATALOGS_H_

#include "catalog/hardware_catalog.h"
#include "catalog/inference_fits.h"
#include "catalog/model_catalog.h"
#include "catalog/validation_sets.h"

namespace headroom::sim::testing {

struct EmbeddedCatalogs {
  catalog::HardwareCatalog hardware = *catalog::HardwareCatalog::Embedded();
  catalog::ModelCatalog models = *catalog::ModelCatalog::Embedded();
  catalog::EngineCatalog engines = *catalog::EngineCatalog::Embedded();
  catalog::ValidationCatalogs catalogs() const { return {&hardware, &models, &engines}; }
};

inline const EmbeddedCatalogs& TheEmbeddedCatalogs() {
  static const EmbeddedCatalogs catalogs;
  return catalogs;
}

}  // namespace headroom::sim::testing

#endif  // HEADROOM_SIM_TESTING_EMBEDDED_CATALOGS_H_
