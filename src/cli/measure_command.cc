// `headroom measure -- CMD ARGS...`: runs a command and reports the energy, power and
// throttling of the GPUs while it ran, per GPU, in total, per phase and per unit of work.
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "app/measure.h"
#include "cli/commands.h"
#include "console/terminal.h"
#include "report/measure_dir.h"

namespace headroom::cli {
namespace {

struct MeasureOptions {
  app::MeasureRequest request;
  bool json = false;
};

int RunMeasure(const GlobalOptions& global, const MeasureOptions& options) {
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

}  // namespace

void RegisterMeasure(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  CLI::App* cmd = app.add_subcommand(
      "measure",
      "Run a command and report the GPUs' energy, power and throttling while it ran.\n"
      "The command may write 'phase NAME' and 'work N' lines to the FIFO at $HEADROOM_MARKERS.");
  auto* cli_options = OptionsRunBy(cmd, run, global, RunMeasure);
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
  cmd->add_option("command", options->command, "The command to run, after --")
      ->required()
      ->expected(1, -1);
}

}  // namespace headroom::cli
