#include "catalog/served_runs.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

#include <fmt/format.h>

#include "catalog/validation_sets.h"
#include "core/parse.h"

namespace headroom::catalog {
namespace {

// A space-separated list of token counts, each at least `min`.
core::Result<std::vector<int>> TokenList(std::string_view text, std::string_view name, int min) {
  std::vector<int> out;
  for (std::string_view rest = core::Trim(text); !rest.empty();) {
    const std::size_t space = rest.find(' ');
    HEADROOM_ASSIGN_OR_RETURN(int n, ValidationCount(rest.substr(0, space), name, min));
    out.push_back(n);
    rest =
        space == std::string_view::npos ? std::string_view{} : core::Trim(rest.substr(space + 1));
  }
  if (out.empty()) {
    return core::Fail(core::Error::InvalidArgument(fmt::format("{} is empty", name)));
  }
  return out;
}

core::Result<model::Measurement> ParseServedRun(const core::CsvRow& f) {
  HEADROOM_ASSIGN_OR_RETURN(model::Measurement m, MeasuredConfiguration(f));
  const std::string_view server = f.Text("server");
  if (server != "yes" && server != "no") {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "server '{}' is neither yes (through the engine's API server) nor no", server)));
  }
  m.server = server == "yes";
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<int> inputs,
                            TokenList(f.Text("input_lens"), "input_lens", 1));
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<int> outputs,
                            TokenList(f.Text("output_lens"), "output_lens", 1));
  if (inputs.size() != outputs.size()) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} input_lens but {} output_lens: one of each per request", inputs.size(),
                    outputs.size())));
  }
  long prompt_tokens = 0;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    m.requests.push_back({inputs[i], outputs[i]});
    prompt_tokens += inputs[i];
    m.output = std::max(m.output, outputs[i]);
  }
  // For reports: the batch, its mean prompt and its longest output.
  m.batch = static_cast<int>(inputs.size());
  m.input = static_cast<int>(std::lround(static_cast<double>(prompt_tokens) / m.batch));
  const auto metric = model::MetricFromName(f.Text("metric"));
  if (!metric || !model::IsServedRunMetric(*metric)) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "metric '{}' is not one of ttft_ms, decode_span_ms, e2e_ms", f.Text("metric"))));
  }
  m.metric = *metric;
  HEADROOM_ASSIGN_OR_RETURN(m.value, ValidationNumber(f.Text("value"), "value"));
  m.source = std::string(f.Text("source"));
  return m;
}

}  // namespace

core::Result<std::vector<model::Measurement>> ParseServedRuns(std::string_view text,
                                                              const std::string& source) {
  return ReadValidationRows(text, source,
                            {"dataset", "engine", "model", "gpu", "tp", "server", "input_lens",
                             "output_lens", "metric", "value", "source"},
                            &ParseServedRun);
}

core::Result<std::vector<model::Measurement>> EmbeddedServedRuns() {
  HEADROOM_ASSIGN_OR_RETURN(const core::EmbeddedFile* f, EmbeddedValidationFile("serving.csv"));
  return ParseServedRuns(f->content, std::string(f->path));
}

}  // namespace headroom::catalog
