// `headroom measure -- CMD ARGS...`: runs a command and reports the energy, power and
// throttling of the GPUs while it ran, per GPU, in total, per phase and per unit of work.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <regex>

#include <fmt/format.h>

#include "app/measure.h"
#include "cli/commands.h"
#include "console/terminal.h"
#include "core/files.h"
#include "core/parse.h"
#include "report/measure_dir.h"
#include "report/result_dir.h"

namespace headroom::cli {
namespace {

// Where `measure --report` writes when no --out is given.
constexpr const char* kDefaultMeasureDir = "headroom-measure";

struct MeasureOptions {
  BackendOptions backend;
  std::string interval = "100ms";
  std::string out;  // FILE.csv / FILE.jsonl, or a directory (no extension, or ending in /)
  bool report = false;
  bool json = false;
  double work = 0;
  std::string unit = "units";
  std::string work_regex;
  std::vector<std::string> command;
};

// `--out` names a directory when it ends in '/' or its last component has no '.'; with
// --report and no --out, the default directory.
std::optional<std::string> OutDir(const MeasureOptions& o) {
  if (o.out.empty())
    return o.report ? std::optional<std::string>(kDefaultMeasureDir) : std::nullopt;
  if (o.out.ends_with('/')) return o.out.substr(0, o.out.size() - 1);
  const std::string last =
      o.out.substr(o.out.rfind('/') == std::string::npos ? 0 : o.out.rfind('/') + 1);
  if (last.find('.') == std::string::npos) return o.out;
  return std::nullopt;
}

core::Result<app::MeasureRequest> Request(const MeasureOptions& options) {
  auto interval = core::ParseDuration(options.interval);
  if (!interval) return core::Fail(interval.error().WithContext("--interval"));
  app::MeasureRequest request{.command = options.command,
                              .interval = *interval,
                              .work = options.work,
                              .unit = options.unit,
                              .on_warning = [](const std::string& w) { PrintWarning(w); }};
  if (!options.work_regex.empty()) {
    try {
      request.work_pattern.emplace(options.work_regex);
    } catch (const std::regex_error& e) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("--work-regex '{}': {}", options.work_regex, e.what())));
    }
  }
  return request;
}

// The series file of --out: in the directory, or the file named.
core::Result<std::unique_ptr<app::SeriesFile>> OpenSeries(const MeasureOptions& options,
                                                          const std::optional<std::string>& dir) {
  if (options.report && !dir) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "--report needs --out DIR (a directory name without an extension), not the file {}",
        options.out)));
  }
  if (dir) {
    std::error_code ec;
    std::filesystem::create_directories(*dir, ec);
    if (ec) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("--out {}: cannot create the directory: {}", *dir, ec.message())));
    }
  }
  if (options.out.empty() && !dir) return std::unique_ptr<app::SeriesFile>();
  return app::SeriesFile::Open(dir ? *dir + "/" + report::kSeriesFile : options.out);
}

// The directory's summary, phases and report, or the summary beside a series file.
core::Status Save(const MeasureOptions& options, const std::optional<std::string>& dir,
                  const app::Measurement& m, const nlohmann::ordered_json& json) {
  if (!dir) {
    if (options.out.empty()) return core::Ok();
    return core::WriteFileAtomically(app::SummaryPathBeside(options.out), json.dump(2) + "\n");
  }
  HEADROOM_RETURN_IF_ERROR(
      app::WriteMeasureDir(*dir, json, options.interval, HEADROOM_VERSION, m.spans));
  if (!options.report) return core::Ok();
  HEADROOM_ASSIGN_OR_RETURN(std::string path, WriteReport(report::ResultKind::kMeasure, *dir));
  std::fprintf(options.json ? stderr : stdout, "report: %s\n", path.c_str());
  return core::Ok();
}

int RunMeasure(const GlobalOptions& global, const MeasureOptions& options) {
  auto request = Request(options);
  if (!request) return ReportError(request.error());
  const std::optional<std::string> dir = OutDir(options);
  auto series = OpenSeries(options, dir);
  if (!series) return ReportError(series.error());
  core::SystemClock clock;
  auto set = app::OpenDevices(global.catalog_dir, options.backend, &clock);
  if (!set) return ReportError(set.error());
  std::vector<gpu::Device*> devices;
  for (auto& d : set->devices) devices.push_back(d.get());
  request->backend = set->backend;
  auto m = app::MeasureCommand(devices, &clock, *request, series->get());
  if (!m) return ReportError(m.error());
  series->reset();  // flushes and closes the series before the report reads it

  const nlohmann::ordered_json json = report::MeasureJson(m->summary);
  std::cout << (options.json ? json.dump(2) + "\n"
                             : report::MeasureText(m->summary, StdoutStyle()));
  if (auto st = Save(options, dir, *m, json); !st) return ReportError(st.error());
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
  auto* options = OptionsRunBy(cmd, run, global, RunMeasure);
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
                            kDefaultMeasureDir));
  cmd->add_flag("--json", options->json, "Print the summary as JSON");
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
