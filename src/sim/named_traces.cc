#include "sim/named_traces.h"

#include <array>
#include <filesystem>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "catalog/embedded_data.h"
#include "core/check.h"
#include "core/parse.h"
#include "core/thread_annotations.h"
#include "sim/recorded_requests.h"
#include "sim/trace_reader.h"

namespace headroom::sim {
namespace {

struct Alias {
  std::string_view name;
  std::string_view path;
};
constexpr std::array<Alias, 2> kAliases = {{
    {"azure-conv", "data/traces/AzureLLMInferenceTrace_conv.csv"},
    {"azure-code", "data/traces/AzureLLMInferenceTrace_code.csv"},
}};

// The embedded traces parsed, once a process: a simulation on a real trace reads it twice (its
// mean rate first), `simulate --report` and a plan run it again for every run, and parsing the
// CSV costs more than replaying it from memory (the two hour-long traces hold 28,000 requests).
class ParsedTraces {
 public:
  core::Result<std::shared_ptr<const RecordedRequests>> Get(const NamedTrace& trace) {
    core::MutexLock lock(&mu_);
    auto it = parsed_.find(trace.path);
    if (it != parsed_.end()) return it->second;
    HEADROOM_ASSIGN_OR_RETURN(auto reader,
                              TraceReader::FromView(std::string(trace.path), trace.text));
    RecordingSource recording(*reader);
    while (true) {
      HEADROOM_ASSIGN_OR_RETURN(const std::optional<TraceRequest> r, recording.Next());
      if (!r) break;
    }
    HEADROOM_CHECK(recording.complete()) << trace.path << ": a request the recording cannot hold";
    std::shared_ptr<const RecordedRequests> requests = recording.Take();
    parsed_.emplace(trace.path, requests);
    return requests;
  }

 private:
  core::Mutex mu_;
  std::map<std::string_view, std::shared_ptr<const RecordedRequests>> parsed_ GUARDED_BY(mu_);
};

ParsedTraces& Parsed() {
  static ParsedTraces* parsed = new ParsedTraces;  // never destroyed: no exit-order hazard
  return *parsed;
}

}  // namespace

std::vector<NamedTrace> NamedTraces() {
  std::vector<NamedTrace> traces;
  for (const Alias& alias : kAliases) {
    for (const core::EmbeddedFile& file : catalog::EmbeddedTraceFiles()) {
      if (file.path == alias.path) traces.push_back({alias.name, alias.path, file.content});
    }
  }
  return traces;
}

core::Result<std::unique_ptr<RequestSource>> OpenTrace(std::string_view name_or_path) {
  const std::string key = core::ToLower(core::Trim(name_or_path));
  std::string names;
  for (const NamedTrace& trace : NamedTraces()) {
    if (trace.name == key) {
      HEADROOM_ASSIGN_OR_RETURN(std::shared_ptr<const RecordedRequests> requests,
                                Parsed().Get(trace));
      return std::unique_ptr<RequestSource>(std::make_unique<ReplaySource>(std::move(requests)));
    }
    names += fmt::format("{}{}", names.empty() ? "" : ", ", trace.name);
  }
  const std::string path(name_or_path);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return core::Fail(core::Error::NotFound(
        fmt::format("trace '{}' is neither a named trace ({}) nor a file", name_or_path, names)));
  }
  if (std::filesystem::is_directory(path, ec)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("trace '{}' is a directory, not a trace file", name_or_path)));
  }
  HEADROOM_ASSIGN_OR_RETURN(auto reader, TraceReader::Open(path));
  return std::unique_ptr<RequestSource>(std::move(reader));
}

}  // namespace headroom::sim
