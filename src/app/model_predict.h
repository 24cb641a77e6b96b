// What `headroom model predict` does below its flags: one inference batch of a catalogued model
// on a catalogued GPU type, at a clock lock or under a power limit, through the inference model
// with a serving engine's calibration for that GPU type. Thread-compatible.
#ifndef HEADROOM_APP_MODEL_PREDICT_H_
#define HEADROOM_APP_MODEL_PREDICT_H_

#include <string>

#include "app/context.h"
#include "core/result.h"
#include "model/batch_prediction.h"
#include "report/prediction_report.h"

namespace headroom::app {

struct ModelPredictRequest {
  std::string catalog_dir = {};  // empty: the built-in catalog
  std::string model = {};        // as --model
  std::string gpu = {};          // as --gpu
  model::BatchQuery query = {};
  EngineOptions engine = {};
};

struct ModelPredictResult {
  report::PredictionContext context;
  model::BatchQuery query;
  model::BatchPrediction prediction;
};

// Errors name the flag: --gpu, --model, --tp (must divide the model's attention heads),
// --sm-clock and --power-limit (not both; each within the GPU's range), --engine.
[[nodiscard]] core::Result<ModelPredictResult> ModelPredict(const ModelPredictRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_MODEL_PREDICT_H_
