#include "catalog/perf_profile.h"

#include <map>

#include <fmt/format.h>

#include "catalog/embedded_data.h"
#include "core/csv_reader.h"
#include "core/files.h"
#include "core/parse.h"

namespace headroom::catalog {
namespace {

core::Result<int> PositiveField(std::string_view text, std::string_view name) {
  auto v = core::ParseInteger(text);
  if (!v || *v <= 0) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} '{}' is not a positive whole number", name, text)));
  }
  return static_cast<int>(*v);
}

core::Result<double> PositiveMs(std::string_view text, std::string_view name) {
  auto v = core::ParseDouble(text);
  if (!v || *v <= 0) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} '{}' is not a positive number of milliseconds", name, text)));
  }
  return *v / 1e3;
}

core::Result<model::ProfilePoint> ProfilePointOf(const core::CsvRow& f) {
  model::ProfilePoint p;
  p.hardware = std::string(f.Text("hardware"));
  HEADROOM_ASSIGN_OR_RETURN(p.prompt, PositiveField(f.Text("prompt_size"), "prompt_size"));
  HEADROOM_ASSIGN_OR_RETURN(p.batch, PositiveField(f.Text("batch_size"), "batch_size"));
  HEADROOM_ASSIGN_OR_RETURN(p.output, PositiveField(f.Text("token_size"), "token_size"));
  HEADROOM_ASSIGN_OR_RETURN(p.prefill_s, PositiveMs(f.Text("prompt_time"), "prompt_time"));
  HEADROOM_ASSIGN_OR_RETURN(p.decode_step_s, PositiveMs(f.Text("token_time"), "token_time"));
  HEADROOM_ASSIGN_OR_RETURN(p.tp, PositiveField(f.Text("tensor_parallel"), "tensor_parallel"));
  HEADROOM_ASSIGN_OR_RETURN(p.peak_power_frac, core::ParseDouble(f.Text("peak_power")));
  HEADROOM_ASSIGN_OR_RETURN(p.average_power_frac, core::ParseDouble(f.Text("average_power")));
  return p;
}

}  // namespace

core::Result<std::vector<model::ProfilePoint>> ParsePerfProfile(std::string_view text,
                                                                const std::string& source,
                                                                std::string_view model) {
  std::vector<model::ProfilePoint> points;
  std::map<std::string, size_t> index;
  // Also in the files, not read: e2e_time.
  HEADROOM_RETURN_IF_ERROR(core::ParseCsv(
      text, source,
      {"model", "hardware", "prompt_size", "batch_size", "token_size", "peak_power",
       "average_power", "prompt_time", "token_time", "tensor_parallel"},
      [&](const core::CsvRow& f) -> core::Status {
        if (f.Text("model") != model) return core::Ok();
        auto p = ProfilePointOf(f);
        if (!p) return core::Fail(p.error().WithContext(f.where()));
        const std::string key =
            fmt::format("{}/{}/{}/{}/{}", p->hardware, p->tp, p->prompt, p->batch, p->output);
        auto [it, inserted] = index.emplace(key, points.size());
        if (inserted) {
          p->repeats = 1;
          p->source = f.where();
          points.push_back(*p);
          return core::Ok();
        }
        model::ProfilePoint& acc = points[it->second];  // running mean over repeats
        ++acc.repeats;
        acc.prefill_s += (p->prefill_s - acc.prefill_s) / acc.repeats;
        acc.decode_step_s += (p->decode_step_s - acc.decode_step_s) / acc.repeats;
        return core::Ok();
      }));
  if (points.empty()) {
    return core::Fail(
        core::Error::NotFound(fmt::format("{}: no rows for model '{}'", source, model)));
  }
  return points;
}

core::Result<std::vector<model::ProfilePoint>> LoadPerfProfile(const std::string& path,
                                                               std::string_view model) {
  HEADROOM_ASSIGN_OR_RETURN(std::string text, core::ReadFile(path));
  return ParsePerfProfile(text, path, model);
}

core::Result<std::vector<model::ProfilePoint>> EmbeddedPerfProfile(std::string_view model) {
  for (const core::EmbeddedFile& f : EmbeddedProfileFiles()) {
    auto points = ParsePerfProfile(f.content, std::string(f.path), model);
    if (points || points.error().code() != core::Code::kNotFound) return points;
  }
  return core::Fail(core::Error::NotFound(
      fmt::format("no built-in latency profile has rows for model '{}'", model)));
}

}  // namespace headroom::catalog
