// The request traces known by name ("azure-conv", "azure-code": the Azure LLM inference traces
// of 2023, data/traces/, compiled into the binary so that they work from any directory), and
// OpenTrace, which opens a named trace or a trace file. Thread-safe (no state).
#ifndef HEADROOM_SIM_NAMED_TRACES_H_
#define HEADROOM_SIM_NAMED_TRACES_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "sim/request_source.h"

namespace headroom::sim {

struct NamedTrace {
  std::string_view name;  // e.g. "azure-conv"
  std::string_view path;  // in the source tree, e.g. "data/traces/AzureLLMInferenceTrace_conv.csv"
  std::string_view text;  // the embedded file
};

std::vector<NamedTrace> NamedTraces();

// The trace `name_or_path` names (case-insensitive), or else the file at that path.
// kNotFound listing the names when it is neither.
[[nodiscard]] core::Result<std::unique_ptr<RequestSource>> OpenTrace(std::string_view name_or_path);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_NAMED_TRACES_H_
