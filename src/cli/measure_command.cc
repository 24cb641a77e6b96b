// `headroom measure -- CMD ARGS...`: runs a command and reports the energy, power and
// throttling of the GPUs while it ran, per GPU, in total, per phase and per unit of work.
#include "cli/measure_command.h"

#include <cstdio>
#include <iostream>
#include <string>

#include <fmt/format.h>

#include "app/measure.h"
#include "console/terminal.h"
#include "report/measure_dir.h"

namespace headroom::cli {
namespace {

// The first flag given that only the other way of measuring reads (a command measured, or an
// engine watched), as "--flag"; empty when there is none. Such a flag is an error, not ignored.
std::string FlagOfTheOtherWay(const MeasureCliOptions& o, bool watching) {
  if (!watching) {
    if (!o.watch.duration.empty()) return "--duration";
    if (o.watch.interval != app::EngineWatchRequest{}.interval) return "--engine-metrics-interval";
    return "";
  }
  const app::MeasureRequest defaults;
  if (!o.request.out.empty()) return "--out";
  if (o.request.report) return "--report";
  if (o.request.work != 0) return "--work";
  if (!o.request.work_regex.empty()) return "--work-regex";
  if (o.request.unit != defaults.unit) return "--unit";
  if (o.request.interval != defaults.interval) return "--interval";
  return "";
}

int RunMeasure(const GlobalOptions& global, const MeasureCliOptions& options,
               const EngineWatchRun& watch) {
  const bool watching = !options.watch.url.empty();
  if (const std::string flag = FlagOfTheOtherWay(options, watching); !flag.empty()) {
    PrintError(watching ? fmt::format("{} is for a command measured (measure -- CMD), not for "
                                      "--engine-metrics",
                                      flag)
                        : fmt::format("{} is for --engine-metrics; a command is measured until "
                                      "it exits",
                                      flag));
    return kExitUsage;
  }
  if (watching && !options.request.command.empty()) {
    PrintError(
        "give a command after -- to measure it, or --engine-metrics URL --duration D to watch a "
        "running server, not both");
    return kExitUsage;
  }
  if (watching) return watch(global, options);
  if (options.request.command.empty()) {
    PrintError(
        "give the command to measure after --, or --engine-metrics URL --duration D to watch a "
        "running server");
    return kExitUsage;
  }
  app::MeasureRequest request = options.request;
  request.catalog_dir = global.catalog_dir;
  request.version = HEADROOM_VERSION;
  request.on_warning = PrintWarning;
  request.on_measured = [&options](const report::MeasureSummary& summary,
                                   const nlohmann::ordered_json& json) {
    std::cout << (options.json ? json.dump(2) + "\n" : report::MeasureText(summary, StdoutStyle()));
  };
  auto m = app::Measure(request);
  if (!m) return ReportError(m.error());
  if (m->report) std::fprintf(options.json ? stderr : stdout, "report: %s\n", m->report->c_str());
  const int exit_code = m->summary.exit_code;
  if (m->summary.error) {
    PrintError("measurement incomplete: " + *m->summary.error);
    return exit_code != 0 ? exit_code : kExitRuntime;
  }
  return exit_code;
}

// --engine-metrics and its flags: watch a running serving engine instead of running a command.
void AddEngineWatchOptions(CLI::App* cmd, app::EngineWatchRequest* watch) {
  cmd->add_option("--engine-metrics", watch->url,
                  "Watch a running serving engine instead: its Prometheus metrics URL (vLLM: "
                  "http://127.0.0.1:8000/metrics); prints J per prompt and generated token");
  cmd->add_option("--duration", watch->duration, "With --engine-metrics: how long to watch");
  cmd->add_option("--engine-metrics-interval", watch->interval,
                  "With --engine-metrics: how often the engine is scraped (one window each)")
      ->capture_default_str();
  cmd->add_option("--engine-prompt-tokens-metric", watch->prompt_tokens_metric,
                  "The engine's counter of prompt tokens")
      ->capture_default_str();
  cmd->add_option("--engine-generation-tokens-metric", watch->generation_tokens_metric,
                  "The engine's counter of generated tokens")
      ->capture_default_str();
  cmd->add_option("--engine-running-metric", watch->running_metric,
                  "The engine's gauge of requests running")
      ->capture_default_str();
  cmd->add_option("--engine-waiting-metric", watch->waiting_metric,
                  "The engine's gauge of requests waiting")
      ->capture_default_str();
}

}  // namespace

void RegisterMeasure(CLI::App& app, const GlobalOptions& global, RunFunction* run,
                     EngineWatchRun watch) {
  CLI::App* cmd = app.add_subcommand(
      "measure",
      "Run a command and report the GPUs' energy, power and throttling while it ran.\n"
      "The command may write 'phase NAME' and 'work N' lines to the FIFO at $HEADROOM_MARKERS.\n"
      "Or watch a running serving engine (--engine-metrics URL --duration D): what a prompt "
      "token and a generated token cost in GPU energy.");
  auto* cli_options = BindOptions<MeasureCliOptions>(
      cmd, run, [&global, watch = std::move(watch)](const MeasureCliOptions& o) {
        return RunMeasure(global, o, watch);
      });
  AddEngineWatchOptions(cmd, &cli_options->watch);
  app::MeasureRequest* options = &cli_options->request;
  options->backend.backend = "nvml";  // an ML engineer measures real GPUs by default
  AddBackendOptions(cmd, &options->backend);
  cmd->add_option("--interval", options->interval, "Sampling interval, 10ms..60s")
      ->capture_default_str();
  cmd->add_option("--out", options->out,
                  "Save the time series to FILE (.csv or .jsonl) and the summary beside it "
                  "(FILE without extension + .summary.json); or, given a directory (a name "
                  "without an extension, or ending in /), series.csv, summary.json and "
                  "phases.csv in it");
  cmd->add_flag("--report", options->report,
                fmt::format("Also write report.html (self-contained HTML, plots inline) into "
                            "the --out directory (default {}/) and print its path",
                            app::kDefaultMeasureDir));
  cmd->add_flag("--json", cli_options->json, "Print the summary as JSON");
  cmd->add_option("--work", options->work, "Units of work the command did (e.g. tokens)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--unit", options->unit, "Name of the unit of work")->capture_default_str();
  cmd->add_option("--work-regex", options->work_regex,
                  "Count work from the command's output: each matching line adds its first "
                  "capture group (or the whole match) as a number, e.g. 'generated (\\d+) tokens'");
  cmd->add_option("command", options->command, "The command to run, after --")->expected(1, -1);
}

}  // namespace headroom::cli
