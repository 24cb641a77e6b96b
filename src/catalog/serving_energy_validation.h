// Energy per generated token against ML.ENERGY's vLLM serving runs (data/validation/mlenergy.csv):
// each run kept a batch of requests running on its GPUs (request rate infinite) and published the
// GPUs' energy per output token. The runs' prompts (ShareGPT conversations) are not in the data,
// so their mean length is fitted as one number for the data set on the rows of named calibration
// models, and every other row is a prediction (`headroom model validate`). Thread-safe (no state).
#ifndef HEADROOM_CATALOG_SERVING_ENERGY_VALIDATION_H_
#define HEADROOM_CATALOG_SERVING_ENERGY_VALIDATION_H_

#include <string>
#include <string_view>
#include <vector>

#include "catalog/validation_sets.h"
#include "core/result.h"
#include "model/measurement.h"

namespace headroom::catalog {

// mlenergy.csv's rows as j_per_token measurements at the run's mean running batch (rounded to a
// whole sequence) and mean output length (rounded); `input` is 0: the prompt length is unknown.
// Errors name file, line and field.
[[nodiscard]] core::Result<std::vector<model::Measurement>> ParseServingEnergyMeasurements(
    std::string_view text, const std::string& source);
[[nodiscard]] core::Result<std::vector<model::Measurement>> EmbeddedServingEnergyMeasurements();

// The calibration subset of the shipped rows: the Llama-3.1 models (8B and 70B, on both GPU
// types), as the engine calibrations are fitted on the Llama-2 rows; Gemma-2 9B and 27B are
// predicted.
inline const std::vector<std::string> kServingEnergyCalibrationModels = {"llama3.1-8b",
                                                                          "llama3.1-70b"};

// Fits the rows' mean prompt length on the rows of `calibration_models` under `engine` (the
// least squared log error over a grid of lengths), then scores every other row under `engine`
// and under the default engine (when `engine` is another) with that length. Adds the cells, the
// rows not scored and the fitted length to `report`. kInvalidArgument when no calibration row
// can be predicted.
[[nodiscard]] core::Status ValidateServingEnergy(
    const ValidationCatalogs& catalogs, const std::string& engine,
    const std::vector<model::Measurement>& rows,
    const std::vector<std::string>& calibration_models, int worst, ValidationReport* report);

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_SERVING_ENERGY_VALIDATION_H_
