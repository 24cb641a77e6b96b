// What `headroom model validate` prints: per engine calibration, data set and metric, the rows
// scored, MAPE, bias and the worst rows; and the rows no calibration could be scored on, with
// why. And what `model fit --profile` prints of a user's profile. Pure functions.
#ifndef HEADROOM_REPORT_VALIDATION_REPORT_H_
#define HEADROOM_REPORT_VALIDATION_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "format/text_style.h"
#include "model/validation_result.h"

namespace headroom::report {

nlohmann::ordered_json ValidationJson(const model::ValidationReport& report);
std::string ValidationText(const model::ValidationReport& report,
                           const format::TextStyle& style = format::TextStyle());

// A user's profile fitted into an engine calibration (`model fit --profile` on profile rows):
// per GPU type and metric, the error on the configurations fitted and on those held out.
nlohmann::ordered_json ProfileEngineFitJson(const model::ProfileFitErrors& fit,
                                            const std::string& profile);
std::string ProfileEngineFitText(const model::ProfileFitErrors& fit, const std::string& profile,
                                 const format::TextStyle& style = format::TextStyle());

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_VALIDATION_REPORT_H_
