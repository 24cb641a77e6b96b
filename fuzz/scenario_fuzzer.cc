// Scenario YAML (`headroom simulate/plan --scenario FILE`): parsed, then resolved against the
// embedded catalogs (policy overrides validated there).
#include "catalog/inference_fits.h"
#include "catalog/model_catalog.h"
#include "fuzz/fuzz_support.h"
#include "sim/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace headroom;
  static const catalog::ModelCatalog models = *catalog::ModelCatalog::Embedded();
  static const catalog::EngineCatalog engines = *catalog::EngineCatalog::Embedded();
  auto scenario = sim::ParseScenario(fuzz::Text(data, size), "fuzz.yaml");
  if (!scenario) return 0;
  (void)sim::Resolve(*scenario,
                     {.hardware = &fuzz::Hardware(), .models = &models, .engines = &engines});
  return 0;
}
