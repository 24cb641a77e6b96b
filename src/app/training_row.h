// What `headroom simulate` does with a training-row scenario (sim/training_scenario.h): the
// row simulated once per mitigation, each judged against the grid's limits, the cheapest within
// them chosen (sim/training_verdict.h), and with --out DIR the summary (training-row.json) and the
// row power of every mitigation at 100 ms (training-power.csv) written, with --report the page.
#ifndef HEADROOM_APP_TRAINING_ROW_H_
#define HEADROOM_APP_TRAINING_ROW_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "sim/training_verdict.h"

namespace headroom::app {

struct TrainingRowRequest {
  std::string scenario = {};               // a built-in name or a YAML file
  std::string catalog_dir = {};            // empty: the built-in catalog
  int servers = 0;                         // 0: the scenario's
  std::optional<std::uint64_t> seed = {};  // nullopt: the scenario's
  std::string out = {};                    // empty: nothing written (unless report)
  bool report = false;
  std::string version = {};
  std::function<void(const std::string&)> on_warning = {};
};

struct TrainingRowResult {
  sim::TrainingRowVerdict verdict;
  nlohmann::ordered_json summary;
  std::string out_dir = {};
  std::optional<std::string> report = {};
};

// Whether `name_or_path` is a training-row scenario; false for anything else, an unreadable
// name included (the inference path then says what is wrong with it).
bool IsTrainingRowScenario(const std::string& name_or_path);

// kInvalidArgument naming the file:line:field or the flag for bad input; kUnavailable for a write.
[[nodiscard]] core::Result<TrainingRowResult> SimulateTrainingRow(const TrainingRowRequest& r);

}  // namespace headroom::app

#endif  // HEADROOM_APP_TRAINING_ROW_H_
