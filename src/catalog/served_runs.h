// data/validation/serving.csv: runs of a serving engine published by others, each with its
// workload (every request's prompt and output tokens, all sent at once) and a latency measured
// end to end: the time to first token, the decode span, the whole run. Read as Measurements with
// their requests (model::Metric::kRun*), scored and fitted like every other row of the suite.
// Thread-safe (no state).
#ifndef HEADROOM_CATALOG_SERVED_RUNS_H_
#define HEADROOM_CATALOG_SERVED_RUNS_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/measurement.h"

namespace headroom::catalog {

// Errors name SOURCE:LINE and the field.
[[nodiscard]] core::Result<std::vector<model::Measurement>> ParseServedRuns(
    std::string_view text, const std::string& source);
[[nodiscard]] core::Result<std::vector<model::Measurement>> EmbeddedServedRuns();

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_SERVED_RUNS_H_
