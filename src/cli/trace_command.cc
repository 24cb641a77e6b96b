// `headroom trace`: request traces for the row simulator. `trace synth` writes a long trace
// (days, weeks) synthesized from a real one with a daily load curve, weekends and bursts;
// `trace stats` summarizes any trace (rates, token distributions, arrivals by hour and day).
#include <cstdint>
#include <iostream>

#include <fmt/format.h>

#include "app/trace.h"
#include "cli/commands.h"
#include "console/progress.h"
#include "console/terminal.h"
#include "core/parse.h"
#include "report/trace_stats_report.h"

namespace headroom::cli {
namespace {

struct SynthOptions {
  std::string from = "azure-conv";
  std::string duration = "7d";
  std::string out;
  std::string start = app::DefaultSynthStart();
  std::string burst_length = "2m";
  sim::SynthParams params;
};

struct StatsOptions {
  std::string trace;
  bool json = false;
};

int RunSynth(const SynthOptions& options) {
  InstallStopHandlers();
  ProgressBar progress("trace synth", ProgressWanted());
  auto synth =
      app::SynthesizeTrace({.from = options.from,
                            .duration = options.duration,
                            .out = options.out,
                            .start = options.start,
                            .burst_length = options.burst_length,
                            .params = options.params,
                            .stop = &StopRequested(),
                            .progress = [&progress](double fraction, std::int64_t written) {
                              progress.Update(fraction, fmt::format("{} requests", written));
                            }});
  progress.Finish();
  if (!synth) return ReportError(synth.error());
  std::cout << fmt::format(
      "Wrote {} requests over {} from {} ({}, {:.3f} req/s on average) to {}\n", synth->requests,
      core::FormatDuration(synth->duration), options.start, options.from,
      static_cast<double>(synth->requests) / core::ToSeconds(synth->duration), options.out);
  return kExitOk;
}

int RunStats(const StatsOptions& options) {
  auto stats = app::SummarizeTrace({.trace = options.trace});
  if (!stats) return ReportError(stats.error());
  if (options.json) {
    std::cout << report::TraceStatsJson(options.trace, *stats).dump(2) << "\n";
  } else {
    std::cout << report::TraceStatsText(options.trace, *stats, StdoutStyle());
  }
  return kExitOk;
}

void AddSynth(CLI::App* trace, RunFunction* run) {
  CLI::App* synth = trace->add_subcommand(
      "synth",
      "Write a long trace (Azure 2023 CSV format) synthesized from a real one: token pairs "
      "resampled, arrivals a Poisson process with a daily curve, weekends and bursts");
  auto* o = OptionsRunBy(synth, run, RunSynth);
  synth
      ->add_option("--from", o->from, "Source trace: " + app::NamedTraceNames() + ", or a CSV file")
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
  stats->add_option("trace", o->trace, "A trace: " + app::NamedTraceNames() + ", or a CSV file")
      ->required();
  stats->add_flag("--json", o->json, "Print JSON instead of tables");
}

}  // namespace headroom::cli
