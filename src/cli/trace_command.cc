// `headroom trace`: request traces for the row simulator. `trace synth` writes a long trace
// (days, weeks) synthesized from a real one with a daily load curve, weekends and bursts;
// `trace stats` summarizes any trace (rates, token distributions, arrivals by hour and day).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.h"
#include "console/progress.h"
#include "console/terminal.h"
#include "core/parse.h"
#include "report/trace_stats_report.h"
#include "sim/named_traces.h"
#include "sim/trace_reader.h"
#include "sim/trace_stats.h"
#include "sim/trace_synth.h"
#include "sim/trace_writer.h"

namespace headroom::cli {
namespace {

// Longest trace `synth` writes: a year is far beyond any study, and caps a typo's output size.
constexpr core::Duration kMaxSynthDuration = std::chrono::days(366);

struct SynthOptions {
  std::string from = "azure-conv";
  std::string duration = "7d";
  std::string out;
  std::string start = sim::FormatAzureTimestamp(sim::kDefaultSynthStart).substr(0, 19);
  std::string burst_length = "2m";
  sim::SynthParams params;
};

struct StatsOptions {
  std::string trace;
  bool json = false;
};

core::Result<core::Duration> ParseFlagDuration(const std::string& text, std::string_view flag) {
  auto d = core::ParseDuration(text);
  if (!d) return core::Fail(d.error().WithContext(flag));
  return *d;
}

// Checks the flags and completes the parameters.
core::Result<sim::SynthParams> Params(const SynthOptions& o) {
  sim::SynthParams params = o.params;
  HEADROOM_ASSIGN_OR_RETURN(params.duration, ParseFlagDuration(o.duration, "--duration"));
  if (params.duration > kMaxSynthDuration) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--duration {} is longer than the limit of 366d", o.duration)));
  }
  HEADROOM_ASSIGN_OR_RETURN(params.burst_length,
                            ParseFlagDuration(o.burst_length, "--burst-length"));
  auto start = sim::ParseAzureTimestamp(o.start);
  if (!start) return core::Fail(start.error().WithContext("--start"));
  if (*start < core::Duration::zero()) {
    return core::Fail(core::Error::InvalidArgument("--start must be after 1970-01-01"));
  }
  params.start = *start;
  const std::filesystem::path dir = std::filesystem::path(o.out).parent_path();
  std::error_code ec;
  if (o.out.empty() || std::filesystem::is_directory(o.out, ec)) {
    return core::Fail(core::Error::InvalidArgument(fmt::format("--out '{}' is not a file", o.out)));
  }
  if (!dir.empty() && !std::filesystem::is_directory(dir, ec)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--out: directory '{}' does not exist", dir.string())));
  }
  return params;
}

int RunSynth(const SynthOptions& options) {
  auto params = Params(options);
  if (!params) return ReportError(params.error());
  auto source = sim::OpenTrace(options.from);
  if (!source) return ReportError(source.error().WithContext("--from"));
  auto sample = sim::SampleTrace(**source);
  if (!sample) return ReportError(sample.error().WithContext("--from"));
  auto synth = sim::TraceSynth::Create(*std::move(sample), *params);
  if (!synth) return ReportError(synth.error());
  InstallStopHandlers();
  ProgressBar progress("trace synth", ProgressWanted());
  const double duration_s = core::ToSeconds(params->duration);
  auto count = sim::WriteTrace(
      **synth, options.out, params->start,
      {.stop = &StopRequested(), .progress = [&](std::int64_t written, double arrival_s) {
         progress.Update(arrival_s / duration_s, fmt::format("{} requests", written));
       }});
  progress.Finish();
  if (!count) return ReportError(count.error());
  std::cout << fmt::format(
      "Wrote {} requests over {} from {} ({}, {:.3f} req/s on average) to {}\n", *count,
      core::FormatDuration(params->duration), options.start, options.from,
      static_cast<double>(*count) / duration_s, options.out);
  return kExitOk;
}

int RunStats(const StatsOptions& options) {
  auto source = sim::OpenTrace(options.trace);
  if (!source) return ReportError(source.error());
  auto stats = sim::ComputeTraceStats(**source);
  if (!stats) return ReportError(stats.error());
  if (options.json) {
    std::cout << report::TraceStatsJson(options.trace, *stats).dump(2) << "\n";
  } else {
    std::cout << report::TraceStatsText(options.trace, *stats, StdoutStyle());
  }
  return kExitOk;
}

std::string TraceNames() {
  std::string names;
  for (const auto& t : sim::NamedTraces())
    names += fmt::format("{}{}", names.empty() ? "" : ", ", t.name);
  return names;
}

void AddSynth(CLI::App* trace, RunFunction* run) {
  CLI::App* synth = trace->add_subcommand(
      "synth",
      "Write a long trace (Azure 2023 CSV format) synthesized from a real one: token pairs "
      "resampled, arrivals a Poisson process with a daily curve, weekends and bursts");
  auto* o = OptionsRunBy(synth, run, RunSynth);
  synth->add_option("--from", o->from, "Source trace: " + TraceNames() + ", or a CSV file")
      ->capture_default_str();
  synth->add_option("--duration", o->duration, "Length, e.g. 1d, 7d, 36h")->capture_default_str();
  synth->add_option("--out", o->out, "Output CSV file")->required();
  synth
      ->add_option("--start", o->start,
                   "Wall-clock time (UTC) of the trace's start, \"YYYY-MM-DD HH:MM:SS\"")
      ->capture_default_str();
  synth->add_option("--seed", o->params.seed, "Random seed: the same seed gives the same trace")
      ->capture_default_str();
  synth->add_option("--mean-rate", o->params.mean_rate_per_s,
                    "Long-run mean rate, req/s (default: the source trace's)");
  synth->add_option("--rate-scale", o->params.rate_scale, "Multiplies the mean rate")
      ->capture_default_str();
  synth
      ->add_option("--peak-to-trough", o->params.peak_to_trough,
                   "Daily peak rate over the night trough (1: flat)")
      ->capture_default_str();
  synth->add_option("--peak-hour", o->params.peak_hour, "Hour of the daily peak, in [0, 24)")
      ->capture_default_str();
  synth
      ->add_option("--weekend-factor", o->params.weekend_factor,
                   "Saturday and Sunday rate over a weekday's")
      ->capture_default_str();
  synth
      ->add_option("--bursts-per-day", o->params.bursts_per_day,
                   "Mean number of load bursts a day (0: none)")
      ->capture_default_str();
  synth->add_option("--burst-size", o->params.burst_size, "Rate multiplier during a burst")
      ->capture_default_str();
  synth->add_option("--burst-length", o->burst_length, "Length of a burst")->capture_default_str();
}

}  // namespace

void RegisterTrace(CLI::App& app, const GlobalOptions& /*global*/, RunFunction* run) {
  CLI::App* trace = app.add_subcommand("trace", "Synthesize and summarize request traces");
  trace->require_subcommand(1);
  AddSynth(trace, run);
  CLI::App* stats = trace->add_subcommand(
      "stats", "Rates, token distributions and arrivals by hour and day of a trace");
  auto* o = OptionsRunBy(stats, run, RunStats);
  stats->add_option("trace", o->trace, "A trace: " + TraceNames() + ", or a CSV file")->required();
  stats->add_flag("--json", o->json, "Print JSON instead of tables");
}

}  // namespace headroom::cli
