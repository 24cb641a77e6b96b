// The files a user gives the inference model: an engine calibration (`--engine-file`), a latency
// profile in headroom's few columns (`model fit --profile`), and the validation suite's CSVs.
// Each parser sees the same input; all but one reject it early.
#include "catalog/inference_fits.h"
#include "catalog/mig_scaling_validation.h"
#include "catalog/serving_energy_validation.h"
#include "catalog/user_profile.h"
#include "catalog/validation_sets.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace headroom::catalog;
  const std::string_view text = headroom::fuzz::Text(data, size);
  if (auto fits = InferenceFits::Parse(text, "fuzz.yaml")) {
    (void)InferenceFits::Parse(fits->ToYaml("# again\n"), "again.yaml").value();
  }
  (void)ParseProfileRows(text, "fuzz.csv", "fuzz");
  (void)ParseInferenceMeasurements(text, "fuzz.csv");
  (void)ParseTrainingMeasurements(text, "fuzz.csv");
  (void)ParseServingEnergyMeasurements(text, "fuzz.csv");
  (void)ParseMigScalingMeasurements(text, "fuzz.csv");
  return 0;
}
