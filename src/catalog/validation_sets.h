// The validation suite (data/validation/, compiled into the binary): latency and power of LLM
// inference measured and published by others (lmdeploy, Argonne's LLM-Inference-Bench, TensorRT-
// LLM's docs), read as Measurements, and what the model makes of them: each engine calibration's
// error on the rows it was not fitted on (`headroom model validate`), and the fit of an engine
// on its calibration rows (`headroom model fit --engine`). Thread-safe (no state).
#ifndef HEADROOM_CATALOG_VALIDATION_SETS_H_
#define HEADROOM_CATALOG_VALIDATION_SETS_H_

#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "catalog/hardware_catalog.h"
#include "catalog/inference_fits.h"
#include "catalog/mig_catalog.h"
#include "catalog/model_catalog.h"
#include "core/csv_reader.h"
#include "core/embedded_file.h"
#include "core/result.h"
#include "model/measurement.h"
#include "model/model_spec.h"
#include "model/validation_result.h"

namespace headroom::catalog {

// data/validation/inference.csv's format: one measurement per line. Errors name file and line.
[[nodiscard]] core::Result<std::vector<model::Measurement>> ParseInferenceMeasurements(
    std::string_view text, const std::string& source);
[[nodiscard]] core::Result<std::vector<model::Measurement>> EmbeddedInferenceMeasurements();

using model::RowError;
using model::SkippedRows;
using model::ValidationCell;
using model::ValidationReport;

struct ValidationCatalogs {
  const HardwareCatalog* hardware = nullptr;
  const ModelCatalog* models = nullptr;
  const EngineCatalog* engines = nullptr;
};

// Whether `engine` is scored on every row of the suite, not only on its own engine's: the
// default engine (the error a user sees who does not choose one) and the profile engine (what
// the POLCA reproduction assumes).
bool IsScoredOnEveryRow(std::string_view engine);
inline constexpr std::string_view kEnginesScoredOnEveryRow[] = {kDefaultEngine, kProfileEngine};

// What a row's value is under an engine, or why it cannot be scored.
using RowPredictor = std::function<std::variant<double, std::string>(const InferenceFits&,
                                                                     const model::Measurement&)>;

// Every engine calibration on its own engine's rows, and IsScoredOnEveryRow's on every row.
// `worst` rows per cell. Predicted by `predict` (ScoreRows), else by PredictRow.
ValidationReport Validate(const ValidationCatalogs& catalogs,
                          const std::vector<model::Measurement>& rows, int worst,
                          const RowPredictor& predict = {});

// data/validation/training.csv: tokens/s per GPU of a training run, with the model's
// architecture in the row (llm-foundry's MPT family).
struct TrainingMeasurement {
  std::string dataset;
  model::ModelSpec model;
  std::string gpu;
  int gpu_count = 0;
  int seq_len = 0;
  int micro_batch = 0;
  double tokens_per_s_per_gpu = 0;
  std::string source;
};
[[nodiscard]] core::Result<std::vector<TrainingMeasurement>> ParseTrainingMeasurements(
    std::string_view text, const std::string& source);
[[nodiscard]] core::Result<std::vector<TrainingMeasurement>> EmbeddedTrainingMeasurements();

// The training model (model/training_model.h) on `rows`: the compute efficiency per GPU type
// fitted on the rows of `calibration_models` (by the model's name) only, the rest scored.
// kInvalidArgument when a GPU type has no calibration rows or is not catalogued.
[[nodiscard]] core::Result<model::TrainingCell> ValidateTraining(
    const HardwareCatalog& hardware, const std::vector<TrainingMeasurement>& rows,
    const std::vector<std::string>& calibration_models, int worst);
// The calibration subset of the shipped training rows: three sizes spread over the family
// (1.3B, 6.7B, 30B), so every other size (125M to 70B) is a prediction.
inline const std::vector<std::string> kTrainingCalibrationModels = {"MPT-1b", "MPT-7b", "MPT-30b"};

// What the validations share.
// A field that must be a whole number in [min, 2^24], or a finite number in (0, max]; errors
// name the field and its text.
[[nodiscard]] core::Result<int> ValidationCount(std::string_view text, std::string_view name,
                                                int min);
[[nodiscard]] core::Result<double> ValidationNumber(
    std::string_view text, std::string_view name, double max = std::numeric_limits<double>::max());
// The columns every inference row of the suite has: dataset, engine, model, GPU and tensor
// parallelism (a whole number of at least 1).
[[nodiscard]] core::Result<model::Measurement> MeasuredConfiguration(const core::CsvRow& row);
// The rows of a CSV of the suite (`columns` by header name), each read by `parse`; its errors get
// "SOURCE:LINE: " in front.
template <typename Row>
[[nodiscard]] core::Result<std::vector<Row>> ReadValidationRows(
    std::string_view text, const std::string& source, const std::vector<core::CsvColumn>& columns,
    core::Result<Row> (*parse)(const core::CsvRow&)) {
  std::vector<Row> out;
  HEADROOM_RETURN_IF_ERROR(
      core::ParseCsv(text, source, columns, [&out, parse](const core::CsvRow& f) -> core::Status {
        auto row = parse(f);
        if (!row) return core::Fail(row.error().WithContext(f.where()));
        out.push_back(std::move(*row));
        return core::Ok();
      }));
  return out;
}
// data/validation/<name>, as built into the binary.
[[nodiscard]] core::Result<const core::EmbeddedFile*> EmbeddedValidationFile(std::string_view name);
// The model's value for a row under `engine` at the row's GPU type, or why it cannot be scored
// (the model or GPU is not catalogued, the engine has no calibration for it, the batch does not
// fit in memory).
std::variant<double, std::string> PredictRow(const ValidationCatalogs& catalogs,
                                             const InferenceFits& engine,
                                             const model::Measurement& m);
// `rows` under `engine`: one cell per data set and metric (the rows `fitted_on` names are
// counted as calibration rows, never scored; the others are scored, `worst` of them kept), and
// the rows that cannot be scored, with why, added to `out`. Predicted by `predict`, or by
// PredictRow when it is empty.
void ScoreRows(const ValidationCatalogs& catalogs, const InferenceFits& engine,
               const std::vector<model::Measurement>& rows,
               const std::function<bool(const model::Measurement&)>& fitted_on, int worst,
               ValidationReport* out, const RowPredictor& predict = {});

// Everything `headroom model validate` prints, from the built-in suite: Validate on the inference
// rows, ML.ENERGY's energy per token (serving_energy_validation.h), and, unless `only_engine`
// names one engine (then only its cells), training throughput and MIG slice scaling
// (mig_scaling_validation.h) on `mig`'s profiles of the GPU MISO measured.
[[nodiscard]] core::Result<ValidationReport> ValidateBuiltInSuite(
    const ValidationCatalogs& catalogs, const MigCatalog& mig, const std::string& only_engine,
    int worst);

// Refits `engine`'s calibration on its calibration rows (InferenceFits::calibration()): one fit
// per GPU type measured; GPU types without power rows keep the default engine's overhead
// activity for that GPU. kInvalidArgument for an engine without a calibration subset.
[[nodiscard]] core::Result<InferenceFits> FitEngineCalibration(
    const ValidationCatalogs& catalogs, const InferenceFits& engine,
    const std::vector<model::Measurement>& rows);

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_VALIDATION_SETS_H_
