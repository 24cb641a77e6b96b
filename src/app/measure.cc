#include "app/measure.h"

#include <filesystem>
#include <mutex>
#include <optional>
#include <regex>
#include <utility>

#include <fmt/format.h>

#include "core/files.h"
#include "report/measure_dir.h"
#include "telemetry/measured_run.h"

namespace headroom::app {
namespace {

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

}  // namespace

core::Result<std::unique_ptr<SeriesFile>> SeriesFile::Open(const std::string& path) {
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

SeriesFile::SeriesFile(const std::string& path, report::MonitorFormat format)
    : stream_(path, std::ios::trunc), writer_(format, stream_) {}

void SeriesFile::Write(const telemetry::Sample& s, core::TimePoint start) {
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

core::Result<Measurement> MeasureCommand(const std::vector<gpu::Device*>& devices,
                                         core::Clock* clock, const MeasureRun& request,
                                         SeriesFile* series) {
  const core::TimePoint start = clock->Now();
  telemetry::MeasuredRunOptions options{.command = request.command,
                                        .interval = request.interval,
                                        .work_pattern = request.work_pattern,
                                        .on_warning = request.on_warning};
  if (series != nullptr) {
    options.sink = [series, start](const telemetry::Sample& s) { series->Write(s, start); };
  }
  std::vector<std::pair<std::string, double>> phase_starts;  // written on the marker thread
  std::mutex phase_mu;
  options.on_phase = [&](const std::string& phase) {
    const double t = core::ToSeconds(clock->Now() - start);
    std::lock_guard<std::mutex> lock(phase_mu);
    phase_starts.emplace_back(phase, t);
  };
  HEADROOM_ASSIGN_OR_RETURN(auto run, telemetry::RunMeasured(devices, clock, options));
  telemetry::Sampler& sampler = *run.sampler;
  if (request.work > 0) sampler.AddWork(request.work);

  Measurement m;
  report::MeasureSummary& summary = m.summary;
  summary.command = request.command;
  summary.exit_code = run.exit_code;
  summary.backend = request.backend;
  summary.duration_s = run.duration_s;
  const auto reports = sampler.Reports();
  const auto phases = sampler.Phases();
  for (size_t i = 0; i < devices.size(); ++i) {
    summary.gpus.push_back({devices[i]->info(), reports[i], phases[i]});
  }
  summary.work = sampler.work();
  summary.unit = request.unit;
  summary.work_by_phase = sampler.work_by_phase();
  if (auto error = sampler.error()) summary.error = error->message();
  std::lock_guard<std::mutex> lock(phase_mu);  // the marker thread has ended by now
  m.spans = Spans(phase_starts, run.duration_s);
  return m;
}

core::Status WriteMeasureDir(const std::string& dir, const nlohmann::ordered_json& summary,
                             const std::string& interval, const std::string& version,
                             const std::vector<report::PhaseSpan>& spans) {
  nlohmann::ordered_json saved = summary;
  saved.update(report::MeasureInputsJson(interval, version));
  HEADROOM_RETURN_IF_ERROR(
      core::WriteFileAtomically(dir + "/" + report::kMeasureSummaryFile, saved.dump(2) + "\n"));
  return core::WriteFileAtomically(dir + "/" + report::kPhasesFile, report::PhaseSpansCsv(spans));
}

std::string SummaryPathBeside(const std::string& series_path) {
  return series_path.substr(0, series_path.rfind('.')) + ".summary.json";
}

namespace {

// `--out` names a directory when it ends in '/' or its last component has no '.'; with
// --report and no --out, the default directory.
std::optional<std::string> OutDir(const MeasureRequest& o) {
  if (o.out.empty())
    return o.report ? std::optional<std::string>(kDefaultMeasureDir) : std::nullopt;
  if (o.out.ends_with('/')) return o.out.substr(0, o.out.size() - 1);
  const std::string last =
      o.out.substr(o.out.rfind('/') == std::string::npos ? 0 : o.out.rfind('/') + 1);
  if (last.find('.') == std::string::npos) return o.out;
  return std::nullopt;
}

core::Result<MeasureRun> RunOf(const MeasureRequest& options) {
  auto interval = core::ParseDuration(options.interval);
  if (!interval) return core::Fail(interval.error().WithContext("--interval"));
  MeasureRun request{.command = options.command,
                     .interval = *interval,
                     .work = options.work,
                     .unit = options.unit,
                     .on_warning = options.on_warning};
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
core::Result<std::unique_ptr<SeriesFile>> OpenSeries(const MeasureRequest& options,
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
  if (options.out.empty() && !dir) return std::unique_ptr<SeriesFile>();
  return SeriesFile::Open(dir ? *dir + "/" + report::kSeriesFile : options.out);
}

// The directory's summary, phases and report (its path), or the summary beside a series file.
core::Result<std::optional<std::string>> Save(const MeasureRequest& options,
                                              const std::optional<std::string>& dir,
                                              const Measurement& m,
                                              const nlohmann::ordered_json& json) {
  if (!dir) {
    if (options.out.empty()) return std::optional<std::string>();
    HEADROOM_RETURN_IF_ERROR(
        core::WriteFileAtomically(SummaryPathBeside(options.out), json.dump(2) + "\n"));
    return std::optional<std::string>();
  }
  HEADROOM_RETURN_IF_ERROR(WriteMeasureDir(*dir, json, options.interval, options.version, m.spans));
  if (!options.report) return std::optional<std::string>();
  HEADROOM_ASSIGN_OR_RETURN(std::string path,
                            WriteReport(report::ResultKind::kMeasure, *dir, options.on_warning));
  return std::optional<std::string>(path);
}

}  // namespace

core::Result<MeasureResult> Measure(const MeasureRequest& request) {
  HEADROOM_ASSIGN_OR_RETURN(MeasureRun run, RunOf(request));
  const std::optional<std::string> dir = OutDir(request);
  HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<SeriesFile> series, OpenSeries(request, dir));
  core::SystemClock clock;
  HEADROOM_ASSIGN_OR_RETURN(DeviceSet set,
                            OpenDevices(request.catalog_dir, request.backend, &clock));
  std::vector<gpu::Device*> devices;
  for (auto& d : set.devices) devices.push_back(d.get());
  run.backend = set.backend;
  HEADROOM_ASSIGN_OR_RETURN(const Measurement m,
                            MeasureCommand(devices, &clock, run, series.get()));
  series.reset();  // flushes and closes the series before the report reads it
  const nlohmann::ordered_json json = report::MeasureJson(m.summary);
  if (request.on_measured) request.on_measured(m.summary, json);
  MeasureResult result{.summary = m.summary};
  HEADROOM_ASSIGN_OR_RETURN(result.report, Save(request, dir, m, json));
  return result;
}

}  // namespace headroom::app
