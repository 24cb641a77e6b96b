// Energy and time per generated token against ML.ENERGY's vLLM serving runs
// (data/validation/mlenergy.csv): each run kept a batch of requests running on its GPUs through
// vLLM's OpenAI server (request rate infinite) and published the GPUs' energy per output token
// and the mean time per output token (TPOT). Two things the data does not carry are fitted on the
// rows of named calibration models: the runs' mean prompt length (ShareGPT conversations), and,
// per GPU type, the server's host time per decode step during which the GPUs wait (fixed, and
// per running sequence; InferenceEfficiency::host_step_s). Every other row is a prediction
// (`headroom model validate`). Thread-safe (no state).
#ifndef HEADROOM_CATALOG_SERVING_ENERGY_VALIDATION_H_
#define HEADROOM_CATALOG_SERVING_ENERGY_VALIDATION_H_

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/validation_sets.h"
#include "core/result.h"
#include "model/measurement.h"

namespace headroom::catalog {

// mlenergy.csv's rows, each as a j_per_token and a tpot_ms measurement (in that order) at the
// run's mean running batch (rounded to a whole sequence) and mean output length (rounded);
// `input` is 0: the prompt length is unknown. Errors name file, line and field.
[[nodiscard]] core::Result<std::vector<model::Measurement>> ParseServingEnergyMeasurements(
    std::string_view text, const std::string& source);
[[nodiscard]] core::Result<std::vector<model::Measurement>> EmbeddedServingEnergyMeasurements();

// The engine calibration the runs are validated under (vLLM's 2024 releases; its host time per
// step is fitted here).
inline constexpr std::string_view kServingEnergyEngine = "vllm";

// The calibration subset of the shipped rows: the Llama-3.1 models (8B and 70B, on both GPU
// types), as the engine calibrations are fitted on the Llama-2 rows; Gemma-2 9B and 27B are
// predicted.
inline const std::vector<std::string> kServingEnergyCalibrationModels = {"llama3.1-8b",
                                                                         "llama3.1-70b"};

// `engine` as the serving-energy runs served: the mean prompt length and, per GPU type, the host
// time per decode step fitted on the rows of `calibration_models` (below), the host time added to
// the engine's calibration.
struct ServingEnergyCalibration {
  InferenceFits served;
  int prompt = 0;  // mean prompt tokens
  struct HostTime {
    double step_s = 0;
    double per_sequence_s = 0;
  };
  std::map<std::string, HostTime> host = {};  // by GPU type
  int calibration_rows = 0;                   // runs of the calibration models
};

// Whether a row is of one of `models` (the calibration subset). REQUIRES: `models` outlives it.
std::function<bool(const model::Measurement&)> OfModels(const std::vector<std::string>& models);

// What ValidateServingEnergy fits before it scores. kInvalidArgument when no calibration row can
// be predicted.
[[nodiscard]] core::Result<ServingEnergyCalibration> CalibrateServingEnergy(
    const ValidationCatalogs& catalogs, const std::string& engine,
    const std::vector<model::Measurement>& rows, const std::vector<std::string>& calibration_models,
    std::optional<int> prompt = std::nullopt);

// On the rows of `calibration_models` under `engine`: for each mean prompt length of a grid, the
// host time per GPU type that best explains their TPOT (least squares), and the length whose
// energy per token has the least squared log error. Then scores every other row under `engine`
// with that host time and length, and under the default engine as it is (when `engine` is
// another) with that length. Adds the cells, the rows not scored and what was fitted to `report`.
// kInvalidArgument when no calibration row can be predicted. A `prompt` given is used as the
// mean prompt length instead of fitting one (the host time is still fitted).
[[nodiscard]] core::Status ValidateServingEnergy(const ValidationCatalogs& catalogs,
                                                 const std::string& engine,
                                                 const std::vector<model::Measurement>& rows,
                                                 const std::vector<std::string>& calibration_models,
                                                 int worst, ValidationReport* report,
                                                 std::optional<int> prompt = std::nullopt);

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_SERVING_ENERGY_VALIDATION_H_
