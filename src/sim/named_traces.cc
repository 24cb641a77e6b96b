#include "sim/named_traces.h"

#include <array>
#include <filesystem>

#include <fmt/format.h>

#include "catalog/embedded_data.h"
#include "core/parse.h"
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
      HEADROOM_ASSIGN_OR_RETURN(
          auto reader, TraceReader::FromText(std::string(trace.path), std::string(trace.text)));
      return std::unique_ptr<RequestSource>(std::move(reader));
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
