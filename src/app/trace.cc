#include "app/trace.h"

#include <chrono>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "core/parse.h"
#include "sim/named_traces.h"
#include "sim/trace_reader.h"
#include "sim/trace_writer.h"

namespace headroom::app {
namespace {

// Longest trace `synth` writes: a year is far beyond any study, and caps a typo's output size.
constexpr core::Duration kMaxSynthDuration = std::chrono::days(366);

core::Result<core::Duration> ParseSynthDuration(const std::string& text, std::string_view flag) {
  auto d = core::ParseDuration(text);
  if (!d) return core::Fail(d.error().WithContext(flag));
  return *d;
}

// Checks the flags and completes the parameters.
core::Result<sim::SynthParams> SynthParamsOf(const TraceSynthRequest& r) {
  sim::SynthParams params = r.params;
  HEADROOM_ASSIGN_OR_RETURN(params.duration, ParseSynthDuration(r.duration, "--duration"));
  if (params.duration > kMaxSynthDuration) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--duration {} is longer than the limit of 366d", r.duration)));
  }
  HEADROOM_ASSIGN_OR_RETURN(params.burst_length,
                            ParseSynthDuration(r.burst_length, "--burst-length"));
  auto start = sim::ParseAzureTimestamp(r.start);
  if (!start) return core::Fail(start.error().WithContext("--start"));
  if (*start < core::Duration::zero()) {
    return core::Fail(core::Error::InvalidArgument("--start must be after 1970-01-01"));
  }
  params.start = *start;
  const std::filesystem::path dir = std::filesystem::path(r.out).parent_path();
  std::error_code ec;
  if (r.out.empty() || std::filesystem::is_directory(r.out, ec)) {
    return core::Fail(core::Error::InvalidArgument(fmt::format("--out '{}' is not a file", r.out)));
  }
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--out: directory '{}' does not exist", dir.string())));
  }
  return params;
}

}  // namespace

std::string NamedTraceNames() {
  std::string names;
  for (const auto& t : sim::NamedTraces()) {
    names += fmt::format("{}{}", names.empty() ? "" : ", ", t.name);
  }
  return names;
}

std::string DefaultSynthStart() {
  return sim::FormatAzureTimestamp(sim::kDefaultSynthStart).substr(0, 19);
}

core::Result<TraceSynthResult> SynthesizeTrace(const TraceSynthRequest& request) {
  HEADROOM_ASSIGN_OR_RETURN(const sim::SynthParams params, SynthParamsOf(request));
  auto source = sim::OpenTrace(request.from);
  if (!source) return core::Fail(source.error().WithContext("--from"));
  auto sample = sim::SampleTrace(**source);
  if (!sample) return core::Fail(sample.error().WithContext("--from"));
  HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<sim::TraceSynth> synth,
                            sim::TraceSynth::Create(*std::move(sample), params));
  const double duration_s = core::ToSeconds(params.duration);
  sim::WriteTraceOptions options{.stop = request.stop};
  if (request.progress) {
    options.progress = [&request, duration_s](std::int64_t written, double arrival_s) {
      request.progress(arrival_s / duration_s, written);
    };
  }
  HEADROOM_ASSIGN_OR_RETURN(const std::int64_t count,
                            sim::WriteTrace(*synth, request.out, params.start, options));
  return TraceSynthResult{.requests = count, .duration = params.duration};
}

core::Result<sim::TraceStats> SummarizeTrace(const TraceStatsRequest& request) {
  HEADROOM_ASSIGN_OR_RETURN(const std::unique_ptr<sim::RequestSource> source,
                            sim::OpenTrace(request.trace));
  return sim::ComputeTraceStats(*source);
}

}  // namespace headroom::app
