// `headroom trace`: request traces for the row simulator. `trace synth` writes a long trace
// (days, weeks) synthesized from a real one with a daily load curve, weekends and bursts;
// `trace stats` summarizes any trace (rates, token distributions, arrivals by hour and day).
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/progress.h"
#include "cli/terminal.h"
#include "core/parse.h"
#include "report/table.h"
#include "sim/named_traces.h"
#include "sim/trace_reader.h"
#include "sim/trace_stats.h"
#include "sim/trace_synth.h"
#include "sim/trace_writer.h"

namespace headroom::cli {
namespace {

using nlohmann::ordered_json;

// Requests between progress updates and checks for Ctrl-C: about a millisecond's work.
constexpr std::int64_t kProgressEvery = 1 << 12;
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
  auto writer = sim::AzureTraceWriter::Create(options.out, params->start);
  if (!writer) return ReportError(writer.error());
  InstallStopHandlers();

  ProgressBar progress("trace synth", ProgressWanted());
  const double duration_s = core::ToSeconds(params->duration);
  while (true) {
    auto next = (*synth)->Next();
    if (!next) return ReportError(next.error());
    if (!*next) break;
    if (auto written = (*writer)->Write(**next); !written) return ReportError(written.error());
    if ((*writer)->count() % kProgressEvery == 0) {
      if (StopRequested().load()) {
        progress.Finish();
        PrintError(fmt::format("interrupted; {} not written", options.out));
        return kExitRuntime;
      }
      progress.Update((*next)->arrival_s / duration_s,
                      fmt::format("{} requests", (*writer)->count()));
    }
  }
  progress.Finish();
  if (auto committed = (*writer)->Commit(); !committed) return ReportError(committed.error());
  std::cout << fmt::format(
      "Wrote {} requests over {} from {} ({}, {:.3f} req/s on average) to {}\n", (*writer)->count(),
      core::FormatDuration(params->duration), options.start, options.from,
      static_cast<double>((*writer)->count()) / core::ToSeconds(params->duration), options.out);
  return kExitOk;
}

std::string Date(core::Duration since_epoch) {
  return sim::FormatAzureTimestamp(since_epoch).substr(0, 10);
}

std::string Weekday(core::Duration since_epoch) {
  static constexpr const char* kNames[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  const std::chrono::sys_time<core::Duration> t(since_epoch);
  return kNames[std::chrono::weekday(std::chrono::floor<std::chrono::days>(t)).c_encoding()];
}

// Midnight (UTC, since 1970) of the trace's first day, where its clock is known.
std::optional<core::Duration> FirstMidnight(const sim::TraceStats& s) {
  if (!s.start_time) return std::nullopt;
  const std::chrono::sys_time<core::Duration> t(*s.start_time);
  return std::chrono::floor<std::chrono::days>(t).time_since_epoch();
}

ordered_json TokensJson(const sim::TokenStats& t) {
  return {{"mean", t.mean}, {"min", t.min}, {"p50", t.p50},
          {"p90", t.p90},   {"p99", t.p99}, {"max", t.max}};
}

ordered_json StatsJson(const std::string& trace, const sim::TraceStats& s) {
  ordered_json out;
  out["trace"] = trace;
  out["start"] =
      s.start_time ? ordered_json(sim::FormatAzureTimestamp(*s.start_time)) : ordered_json(nullptr);
  out["count"] = s.count;
  out["duration_s"] = s.duration_s;
  out["mean_rate_per_s"] = s.mean_rate_per_s;
  out["peak_rate_1s_per_s"] = s.peak_rate_1s_per_s;
  out["peak_rate_60s_per_s"] = s.peak_rate_60s_per_s;
  out["prompt_tokens"] = TokensJson(s.prompt_tokens);
  out["output_tokens"] = TokensJson(s.output_tokens);
  out["high_priority"] = s.high_priority;
  out["low_priority"] = s.low_priority;
  out["per_hour_of_day"] = s.per_hour_of_day;
  const auto midnight = FirstMidnight(s);
  out["per_day"] = ordered_json::array();
  for (size_t d = 0; d < s.per_day.size(); ++d) {
    ordered_json day = {{"day", d}, {"count", s.per_day[d]}};
    if (midnight) {
      const core::Duration at = *midnight + std::chrono::days(d);
      day["date"] = Date(at);
      day["weekday"] = Weekday(at);
    }
    out["per_day"].push_back(day);
  }
  return out;
}

std::string StatsText(const std::string& trace, const sim::TraceStats& s) {
  std::string text = fmt::format(
      "{}: {} requests over {:.1f} s ({:.2f} h){}\n", trace, s.count, s.duration_s,
      s.duration_s / 3600,
      s.start_time ? " from " + sim::FormatAzureTimestamp(*s.start_time).substr(0, 19) + " UTC"
                   : "");
  text +=
      fmt::format("Rate: mean {:.3f} req/s; peak {:.0f} req/s over 1 s, {:.2f} req/s over 60 s\n",
                  s.mean_rate_per_s, s.peak_rate_1s_per_s, s.peak_rate_60s_per_s);
  if (s.high_priority + s.low_priority > 0) {
    text += fmt::format("Priority: {} high, {} low, {} unspecified\n", s.high_priority,
                        s.low_priority, s.count - s.high_priority - s.low_priority);
  }
  report::TextTable tokens({{"TOKENS", report::TextTable::Align::kLeft},
                            {"MEAN"},
                            {"MIN"},
                            {"P50"},
                            {"P90"},
                            {"P99"},
                            {"MAX"}});
  for (const auto& [name, t] :
       {std::pair{"prompt", s.prompt_tokens}, {"output", s.output_tokens}}) {
    tokens.AddRow({name, fmt::format("{:.1f}", t.mean), std::to_string(t.min),
                   std::to_string(t.p50), std::to_string(t.p90), std::to_string(t.p99),
                   std::to_string(t.max)});
  }
  text += "\n" + tokens.Render(StdoutStyle());
  const std::string clock = s.start_time ? "UTC" : "from the first request";
  const int days_seen = static_cast<int>(s.per_day.size());
  std::vector<report::TextTable::Column> columns = {{"HOUR"}, {"REQUESTS"}, {"SHARE"}};
  if (days_seen > 1) columns.push_back({"REQ/S"});
  report::TextTable hours(columns);
  for (int h = 0; h < 24; ++h) {
    const auto n = static_cast<double>(s.per_hour_of_day[h]);
    if (n == 0) continue;
    std::vector<std::string> row = {fmt::format("{:02}", h), fmt::format("{}", n),
                                    fmt::format("{:.1f}%", 100 * n / static_cast<double>(s.count))};
    if (days_seen > 1) row.push_back(fmt::format("{:.3f}", n / days_seen / 3600));
    hours.AddRow(row);
  }
  text += fmt::format("\nRequests by hour of day ({}{}):\n", clock,
                      days_seen > 1 ? fmt::format("; REQ/S: mean over {} days", days_seen) : "") +
          hours.Render(StdoutStyle());
  if (days_seen > 1) {
    const auto midnight = FirstMidnight(s);
    report::TextTable days({{"DAY"},
                            {"DATE", report::TextTable::Align::kLeft},
                            {"WEEKDAY", report::TextTable::Align::kLeft},
                            {"REQUESTS"}});
    for (int d = 0; d < days_seen; ++d) {
      const core::Duration at = midnight ? *midnight + std::chrono::days(d) : core::Duration{};
      days.AddRow({std::to_string(d), midnight ? Date(at) : "-", midnight ? Weekday(at) : "-",
                   std::to_string(s.per_day[d])});
    }
    text += "\nRequests by day:\n" + days.Render(StdoutStyle());
  }
  return text;
}

int RunStats(const StatsOptions& options) {
  auto source = sim::OpenTrace(options.trace);
  if (!source) return ReportError(source.error());
  auto stats = sim::ComputeTraceStats(**source);
  if (!stats) return ReportError(stats.error());
  if (options.json) {
    std::cout << StatsJson(options.trace, *stats).dump(2) << "\n";
  } else {
    std::cout << StatsText(options.trace, *stats);
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
  auto o = std::make_shared<SynthOptions>();
  CLI::App* synth = trace->add_subcommand(
      "synth",
      "Write a long trace (Azure 2023 CSV format) synthesized from a real one: token pairs "
      "resampled, arrivals a Poisson process with a daily curve, weekends and bursts");
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
  synth->callback([run, o] { *run = [o] { return RunSynth(*o); }; });
}

}  // namespace

void RegisterTrace(CLI::App& app, const GlobalOptions& /*global*/, RunFunction* run) {
  CLI::App* trace = app.add_subcommand("trace", "Synthesize and summarize request traces");
  trace->require_subcommand(1);
  AddSynth(trace, run);
  auto o = std::make_shared<StatsOptions>();
  CLI::App* stats = trace->add_subcommand(
      "stats", "Rates, token distributions and arrivals by hour and day of a trace");
  stats->add_option("trace", o->trace, "A trace: " + TraceNames() + ", or a CSV file")->required();
  stats->add_flag("--json", o->json, "Print JSON instead of tables");
  stats->callback([run, o] { *run = [o] { return RunStats(*o); }; });
}

}  // namespace headroom::cli
