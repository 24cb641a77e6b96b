// Reading a measured latency profile in SplitwiseSim's CSV format (data/profiles/): one
// ProfilePoint per configuration, repeats averaged. Errors name the file and line.
// Thread-safe (no state).
#ifndef HEADROOM_CATALOG_PERF_PROFILE_H_
#define HEADROOM_CATALOG_PERF_PROFILE_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/inference_fit.h"

namespace headroom::catalog {

// Rows of `model` only (e.g. "llama2-70b"), in order of first appearance.
[[nodiscard]] core::Result<std::vector<model::ProfilePoint>> ParsePerfProfile(
    std::string_view text, const std::string& source, std::string_view model);
[[nodiscard]] core::Result<std::vector<model::ProfilePoint>> LoadPerfProfile(
    const std::string& path, std::string_view model);
// The llama2-70b profile shipped in data/profiles/, compiled into the binary.
[[nodiscard]] core::Result<std::vector<model::ProfilePoint>> EmbeddedPerfProfile(
    std::string_view model);

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_PERF_PROFILE_H_
