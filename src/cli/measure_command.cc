// `headroom measure -- CMD ARGS...`: runs a command and reports the energy, power and
// throttling of the GPUs while it ran, per GPU, in total, per phase and per unit of work.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <regex>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/measured_run.h"
#include "cli/terminal.h"
#include "core/files.h"
#include "core/parse.h"
#include "report/device_report.h"
#include "report/measure_dir.h"
#include "report/measure_html.h"
#include "report/measure_report.h"
#include "report/result_dir.h"
#include "telemetry/sampler.h"

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

// Writes the sampled time series as CSV or JSON Lines, by the file's extension.
class SeriesFile {
 public:
  static core::Result<std::unique_ptr<SeriesFile>> Open(const std::string& path) {
    report::MonitorFormat format;
    if (path.ends_with(".csv")) {
      format = report::MonitorFormat::kCsv;
    } else if (path.ends_with(".jsonl")) {
      format = report::MonitorFormat::kJsonl;
    } else {
      return core::Fail(core::Error::InvalidArgument(fmt::format(
          "--out {}: use a .csv or .jsonl file name, or a directory name without an extension",
          path)));
    }
    auto file = std::unique_ptr<SeriesFile>(new SeriesFile(path, format));
    if (!file->stream_) {
      return core::Fail(core::Error::Unavailable(fmt::format("--out {}: cannot write", path)));
    }
    return file;
  }
  void Write(const telemetry::Sample& s, core::TimePoint start) {
    report::MonitorRow row;
    row.time_s = core::ToSeconds(s.snapshot.time - start);
    row.gpu = s.gpu;
    if (s.snapshot.energy_counter) {
      auto [it, inserted] = first_energy_.emplace(s.gpu, *s.snapshot.energy_counter);
      row.energy_since_start = *s.snapshot.energy_counter - it->second;
    }
    row.snapshot = s.snapshot;
    writer_.Write(row);
  }

 private:
  SeriesFile(const std::string& path, report::MonitorFormat format)
      : stream_(path, std::ios::trunc), writer_(format, stream_) {}
  std::ofstream stream_;
  report::MonitorWriter writer_;
  std::map<int, core::Joules> first_energy_;
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

// The phases' spans from their start times (relative to the command's start) and the end.
std::vector<report::PhaseSpan> Spans(const std::vector<std::pair<std::string, double>>& starts,
                                     double end_s) {
  std::vector<report::PhaseSpan> spans;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    spans.push_back({.name = starts[i].first,
                     .start_s = starts[i].second,
                     .end_s = i + 1 < starts.size() ? starts[i + 1].second : end_s});
  }
  return spans;
}

int RunMeasure(const GlobalOptions& global, const MeasureOptions& options) {
  auto interval = core::ParseDuration(options.interval);
  if (!interval) return ReportError(interval.error().WithContext("--interval"));
  std::optional<std::regex> pattern;
  if (!options.work_regex.empty()) {
    try {
      pattern.emplace(options.work_regex);
    } catch (const std::regex_error& e) {
      return ReportError(core::Error::InvalidArgument(
          fmt::format("--work-regex '{}': {}", options.work_regex, e.what())));
    }
  }
  const std::optional<std::string> dir = OutDir(options);
  if (options.report && !dir) {
    return ReportError(core::Error::InvalidArgument(fmt::format(
        "--report needs --out DIR (a directory name without an extension), not the file {}",
        options.out)));
  }
  std::unique_ptr<SeriesFile> series;
  if (dir) {
    std::error_code ec;
    std::filesystem::create_directories(*dir, ec);
    if (ec) {
      return ReportError(core::Error::InvalidArgument(
          fmt::format("--out {}: cannot create the directory: {}", *dir, ec.message())));
    }
  }
  if (!options.out.empty() || dir) {
    auto file = SeriesFile::Open(dir ? *dir + "/" + report::kSeriesFile : options.out);
    if (!file) return ReportError(file.error());
    series = std::move(*file);
  }
  core::SystemClock clock;
  auto set = OpenDevices(global, options.backend, &clock);
  if (!set) return ReportError(set.error());
  std::vector<gpu::Device*> devices;
  for (auto& d : set->devices) devices.push_back(d.get());

  const core::TimePoint start = clock.Now();
  MeasuredRunOptions run_options{.command = options.command, .interval = *interval};
  run_options.work_pattern = std::move(pattern);
  if (series) {
    run_options.sink = [&series, start](const telemetry::Sample& s) { series->Write(s, start); };
  }
  std::vector<std::pair<std::string, double>> phase_starts;  // written on the marker thread
  std::mutex phase_mu;
  run_options.on_phase = [&](const std::string& phase) {
    const double t = core::ToSeconds(clock.Now() - start);
    std::lock_guard<std::mutex> lock(phase_mu);
    phase_starts.emplace_back(phase, t);
  };
  auto run = RunMeasured(devices, &clock, run_options);
  if (!run) return ReportError(run.error());
  telemetry::Sampler& sampler = *run->sampler;
  if (options.work > 0) sampler.AddWork(options.work);
  const std::optional<int> exit_code = run->exit_code;

  report::MeasureSummary summary;
  summary.command = options.command;
  summary.exit_code = *exit_code;
  summary.backend = set->backend;
  summary.duration_s = run->duration_s;
  const auto reports = sampler.Reports();
  const auto phases = sampler.Phases();
  for (size_t i = 0; i < devices.size(); ++i) {
    summary.gpus.push_back({devices[i]->info(), reports[i], phases[i]});
  }
  summary.work = sampler.work();
  summary.unit = options.unit;
  summary.work_by_phase = sampler.work_by_phase();
  if (auto error = sampler.error()) summary.error = error->message();

  const nlohmann::ordered_json json = report::MeasureJson(summary);
  if (options.json) {
    std::cout << json.dump(2) << "\n";
  } else {
    std::cout << report::MeasureText(summary, StdoutStyle());
  }
  if (dir) {
    nlohmann::ordered_json saved = json;
    saved["inputs"] = {{"interval", options.interval}, {"version", HEADROOM_VERSION}};
    std::vector<report::PhaseSpan> spans;
    {
      std::lock_guard<std::mutex> lock(phase_mu);
      spans = Spans(phase_starts, run->duration_s);
    }
    series.reset();  // flushes and closes series.csv
    for (const auto& [file, content] :
         {std::pair{report::kMeasureSummaryFile, saved.dump(2) + "\n"},
          std::pair{report::kPhasesFile, report::PhaseSpansCsv(spans)}}) {
      if (auto st = core::WriteFileAtomically(*dir + "/" + file, content); !st) {
        return ReportError(st.error());
      }
    }
    if (options.report) {
      auto w = report::WriteResultReport(report::ResultKind::kMeasure, *dir);
      if (!w) return ReportError(w.error());
      for (const std::string& warning : w->warnings) {
        PrintWarning(warning);
      }
      std::fprintf(options.json ? stderr : stdout, "report: %s\n", w->path.c_str());
    }
  } else if (!options.out.empty()) {
    const std::string summary_path =
        options.out.substr(0, options.out.rfind('.')) + ".summary.json";
    if (auto st = core::WriteFileAtomically(summary_path, json.dump(2) + "\n"); !st) {
      return ReportError(st.error());
    }
  }
  if (summary.error) {
    PrintError("measurement incomplete: " + *summary.error);
    return *exit_code != 0 ? *exit_code : kExitRuntime;
  }
  return *exit_code;
}

}  // namespace

void RegisterMeasure(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  auto options = std::make_shared<MeasureOptions>();
  options->backend.backend = "nvml";  // an ML engineer measures real GPUs by default
  CLI::App* cmd = app.add_subcommand(
      "measure",
      "Run a command and report the GPUs' energy, power and throttling while it ran.\n"
      "The command may write 'phase NAME' and 'work N' lines to the FIFO at $HEADROOM_MARKERS.");
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
  cmd->callback([run, options, &global] {
    *run = [options, &global] { return RunMeasure(global, *options); };
  });
}

}  // namespace headroom::cli
