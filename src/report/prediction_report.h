// What `headroom model predict` prints of a BatchPrediction: JSON and a few lines of text.
// Pure functions.
#ifndef HEADROOM_REPORT_PREDICTION_REPORT_H_
#define HEADROOM_REPORT_PREDICTION_REPORT_H_

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "model/batch_prediction.h"

namespace headroom::report {

struct PredictionContext {
  std::string model = {};
  std::string gpu = {};
  std::string engine = {};  // the serving engine's calibration (data/fits/)
  std::string engine_version = {};
  std::string fitted_on = {};  // the GPU type whose measurements gave the efficiencies
  int max_context = 0;         // the model's trained context
};

nlohmann::ordered_json PredictionJson(const PredictionContext& context,
                                      const model::BatchQuery& query,
                                      const model::BatchPrediction& prediction);
std::string PredictionText(const PredictionContext& context, const model::BatchQuery& query,
                           const model::BatchPrediction& prediction);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_PREDICTION_REPORT_H_
