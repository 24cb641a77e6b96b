// What `headroom model fit` prints of a fitted profile: its JSON, the table of fitted parameters
// and MAPE per GPU type with the notes under it, and the per-point comparison of measured and
// modelled times. Pure functions of the fit.
#ifndef HEADROOM_REPORT_MODEL_FIT_REPORT_H_
#define HEADROOM_REPORT_MODEL_FIT_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "format/text_style.h"
#include "model/inference_fit.h"

namespace headroom::report {

// `profile`: the profile's path as shown; `model`: the model whose rows were fitted.
nlohmann::ordered_json ModelFitJson(const model::ProfileFit& fit, const std::string& profile,
                                    const std::string& model);
std::string ModelFitText(const model::ProfileFit& fit, const std::string& profile,
                         const std::string& model,
                         const format::TextStyle& style = format::TextStyle());
// Per GPU type, every point of its profile: measured against modelled prefill and decode step.
std::string ModelFitPointsText(const model::ProfileFit& fit, const model::ModelSpec& spec,
                               const format::TextStyle& style = format::TextStyle());

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MODEL_FIT_REPORT_H_
