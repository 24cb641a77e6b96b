// The model's error against measurements: per engine calibration, data set and metric, on the
// rows it was not fitted on (`headroom model validate`, catalog/validation_sets.h), and a user's
// profile fitted into a calibration (`model fit --profile`, catalog/user_profile.h). Plain value
// types, for the reports.
#ifndef HEADROOM_MODEL_VALIDATION_RESULT_H_
#define HEADROOM_MODEL_VALIDATION_RESULT_H_

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "model/measurement.h"

namespace headroom::model {

// One measurement against the model.
struct RowError {
  Measurement row;
  double predicted = 0;
  double error = 0;  // predicted / measured - 1
};

// An engine calibration on one data set and metric: the rows it was not fitted on.
struct ValidationCell {
  std::string engine;
  std::string dataset;
  Metric metric = Metric::kDecodeMs;
  bool own_engine = false;  // the rows measured this engine (else another engine's)
  int rows = 0;
  int calibration_rows = 0;  // fitted on, so not scored
  double mape = 0;
  double bias = 0;                // mean of predicted / measured - 1
  std::vector<RowError> worst{};  // the largest errors, worst first
};

// Rows no calibration could be scored on, and why (the model is not catalogued, the batch does
// not fit in memory, the engine has no calibration for the GPU type).
struct SkippedRows {
  std::string engine;
  std::string reason;
  int rows = 0;
};

// The training model on one data set: tokens/s per GPU, with the compute efficiency fitted per
// GPU type on the calibration models' rows and scored on the others'.
struct TrainingCell {
  std::string dataset;
  std::vector<std::string> calibration_models = {};
  std::vector<std::pair<std::string, double>> efficiency = {};  // per GPU type, fitted
  int rows = 0;
  int calibration_rows = 0;
  double mape = 0;
  double bias = 0;
  struct Worst {
    std::string source;
    std::string model;
    std::string gpu;
    int seq_len = 0;
    double measured = 0;
    double predicted = 0;
    double error = 0;
  };
  std::vector<Worst> worst = {};
};

// A quantity of a data set's workload that its rows do not carry (ML.ENERGY's mean prompt
// length), fitted on the rows of its calibration models under one engine calibration and then
// used for every row of the data set.
struct FittedWorkload {
  std::string dataset;
  std::string engine;
  std::vector<std::string> calibration_models = {};
  int calibration_rows = 0;
  std::string quantity;  // e.g. "mean prompt tokens"
  double value = 0;
};

// The MIG slice model's throughput scaling on one data set: each workload at each batch size is
// fitted on its smallest and largest slices, the slices in between are scored; the share of the
// per-sample time that scales with SMs (the rest scales with memory slices) is fitted on the
// calibration workloads' middle slices only.
struct MigScalingCell {
  std::string dataset;
  std::string gpu;
  std::vector<std::string> calibration_workloads = {};
  double compute_share = 0;
  int rows = 0;              // middle-slice rows of the other workloads: scored
  int calibration_rows = 0;  // middle-slice rows of the calibration workloads
  int anchor_rows = 0;       // smallest- and largest-slice rows each configuration is fitted on
  int unscored_rows = 0;     // configurations without both anchors
  double mape = 0;
  double bias = 0;
  struct Worst {
    std::string source;
    std::string workload;
    int batch = 0;
    std::string slice;
    double measured = 0;  // samples/s
    double predicted = 0;
    double error = 0;
  };
  std::vector<Worst> worst = {};
};

struct ValidationReport {
  std::vector<ValidationCell> cells;
  std::vector<SkippedRows> skipped;
  std::vector<TrainingCell> training = {};
  std::vector<FittedWorkload> fitted_workloads = {};
  std::vector<MigScalingCell> mig_scaling = {};
};

// A cell whose `mape` and `bias` hold sums over its `rows` and whose `worst` holds every scored
// row: the means, and the `worst` rows by absolute error, worst first.
template <typename Cell>
void FinishErrorSums(Cell* cell, int worst) {
  if (cell->rows > 0) {
    cell->mape /= cell->rows;
    cell->bias /= cell->rows;
  }
  std::sort(cell->worst.begin(), cell->worst.end(),
            [](const auto& a, const auto& b) { return std::abs(a.error) > std::abs(b.error); });
  if (cell->worst.size() > static_cast<std::size_t>(worst)) cell->worst.resize(worst);
}

struct ProfileMetricError {
  std::string gpu;
  Metric metric = Metric::kDecodeMs;
  int train_rows = 0;
  double train_mape = 0;
  int held_out_rows = 0;
  double held_out_mape = 0;
};

struct ProfileFitErrors {
  std::string engine = {};
  std::vector<std::string> fitted_gpus = {};
  std::vector<ProfileMetricError> errors = {};
  // Rows whose batch's KV cache cannot fit in the GPUs' memory: the engine ran part of the batch
  // at a time, so the row does not measure the batch it names. Left out of the fit.
  std::vector<std::string> queued = {};  // their sources
};

}  // namespace headroom::model

#endif  // HEADROOM_MODEL_VALIDATION_RESULT_H_
