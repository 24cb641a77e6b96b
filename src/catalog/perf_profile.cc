#include "catalog/perf_profile.h"

#include <map>

#include <fmt/format.h>

#include "catalog/embedded_data.h"
#include "core/files.h"
#include "core/parse.h"

namespace headroom::catalog {
namespace {

constexpr std::string_view kHeader =
    "model,hardware,prompt_size,batch_size,token_size,peak_power,average_power,prompt_time,"
    "token_time,e2e_time,tensor_parallel";

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

}  // namespace

core::Result<std::vector<model::ProfilePoint>> ParsePerfProfile(std::string_view text,
                                                                const std::string& source,
                                                                std::string_view model) {
  const auto lines = core::Split(text, '\n');
  if (lines.empty() || core::Trim(lines[0]) != kHeader) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{}:1: expected the header '{}'", source, kHeader)));
  }
  std::vector<model::ProfilePoint> points;
  std::map<std::string, size_t> index;
  for (size_t i = 1; i < lines.size(); ++i) {
    const std::string_view line = core::Trim(lines[i]);
    if (line.empty()) continue;
    const auto f = core::Split(line, ',');
    const std::string where = fmt::format("{}:{}", source, i + 1);
    if (f.size() != 11) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("{}: expected 11 fields, found {}", where, f.size())));
    }
    if (f[0] != model) continue;
    model::ProfilePoint p;
    p.hardware = std::string(f[1]);
    auto fill = [&]() -> core::Status {
      HEADROOM_ASSIGN_OR_RETURN(p.prompt, PositiveField(f[2], "prompt_size"));
      HEADROOM_ASSIGN_OR_RETURN(p.batch, PositiveField(f[3], "batch_size"));
      HEADROOM_ASSIGN_OR_RETURN(p.output, PositiveField(f[4], "token_size"));
      HEADROOM_ASSIGN_OR_RETURN(p.prefill_s, PositiveMs(f[7], "prompt_time"));
      HEADROOM_ASSIGN_OR_RETURN(p.decode_step_s, PositiveMs(f[8], "token_time"));
      HEADROOM_ASSIGN_OR_RETURN(p.tp, PositiveField(f[10], "tensor_parallel"));
      HEADROOM_ASSIGN_OR_RETURN(p.peak_power_frac, core::ParseDouble(f[5]));
      HEADROOM_ASSIGN_OR_RETURN(p.average_power_frac, core::ParseDouble(f[6]));
      return core::Ok();
    }();
    if (!fill) return core::Fail(fill.error().WithContext(where));
    const std::string key =
        fmt::format("{}/{}/{}/{}/{}", p.hardware, p.tp, p.prompt, p.batch, p.output);
    auto [it, inserted] = index.emplace(key, points.size());
    if (inserted) {
      p.repeats = 1;
      p.source = where;
      points.push_back(p);
      continue;
    }
    model::ProfilePoint& acc = points[it->second];  // running mean over repeats
    ++acc.repeats;
    acc.prefill_s += (p.prefill_s - acc.prefill_s) / acc.repeats;
    acc.decode_step_s += (p.decode_step_s - acc.decode_step_s) / acc.repeats;
  }
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
