// What `headroom simulate` prints and writes for a training row: the table per mitigation (ramps,
// the bands' swing, throughput and energy against no mitigation, within the limits or which one
// it breaks) and the choice; the same as JSON (training-row.json, and what --json prints); the
// row power of every mitigation at 100 ms as CSV (training-power.csv). Pure; thread-safe.
#ifndef HEADROOM_REPORT_TRAINING_ROW_REPORT_H_
#define HEADROOM_REPORT_TRAINING_ROW_REPORT_H_

#include <string>

#include <nlohmann/json.hpp>

#include "format/text_style.h"
#include "sim/training_verdict.h"

namespace headroom::report {

inline constexpr const char* kTrainingRowFile = "training-row.json";
inline constexpr const char* kTrainingPowerFile = "training-power.csv";
// The CSV's and the report's row power: means over this many seconds (10 steps of 10 ms).
inline constexpr double kTrainingPowerPeriodS = 0.1;

std::string TrainingRowText(const sim::TrainingRowVerdict& v,
                            const format::TextStyle& style = format::TextStyle());
nlohmann::ordered_json TrainingRowJson(const sim::TrainingRowVerdict& v,
                                       const std::string& version);
std::string TrainingPowerCsv(const sim::TrainingRowVerdict& v);

// The answer in one line: "clock-lock 1110 MHz keeps the row within its limits at 3.1% fewer
// iterations per hour and 2.0% less energy per iteration", or which limits none meets.
std::string TrainingAnswer(const sim::TrainingRowVerdict& v);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_TRAINING_ROW_REPORT_H_
