// What `headroom measure` does below its flags: runs the user's command while the GPUs are
// sampled (telemetry::RunMeasured), optionally streams every sample to a time-series file as it
// is taken, times the phases the command marks, sums it all into a MeasureSummary, and writes
// the --out directory (measure_dir.h) or the summary beside a series file.
// Not thread-safe (one measurement at a time: signal forwarding is process-wide).
#ifndef HEADROOM_APP_MEASURE_H_
#define HEADROOM_APP_MEASURE_H_

#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/context.h"
#include "core/result.h"
#include "core/time.h"
#include "gpu/device.h"
#include "report/device_report.h"
#include "report/measure_report.h"
#include "report/reductions.h"
#include "telemetry/sampler.h"

namespace headroom::app {

// The sampled time series as CSV or JSON Lines (by the file's extension: .csv, .jsonl), energy
// counted from each GPU's first reading.
class SeriesFile {
 public:
  // kInvalidArgument for another extension, kUnavailable when the file cannot be written.
  [[nodiscard]] static core::Result<std::unique_ptr<SeriesFile>> Open(const std::string& path);
  void Write(const telemetry::Sample& sample, core::TimePoint start);

 private:
  SeriesFile(const std::string& path, report::MonitorFormat format);
  std::ofstream stream_;
  report::MonitorWriter writer_;
  std::map<int, core::Joules> first_energy_;
};

// One run of the command, as MeasureCommand takes it.
struct MeasureRun {
  std::vector<std::string> command;
  core::Duration interval{std::chrono::milliseconds(100)};
  std::optional<std::regex> work_pattern = {};
  double work = 0;  // units the user says the command did, added to what it reports
  std::string unit = "units";
  std::string backend = {};
  std::function<void(const std::string&)> on_warning = {};
};

struct Measurement {
  report::MeasureSummary summary;
  std::vector<report::PhaseSpan> spans;  // relative to the command's start
};

// Runs the command to completion on `devices` (`series`, when given, gets every sample).
// kNotFound when the program cannot start; a GPU error during the run ends the sampling and is
// kept in summary.error.
[[nodiscard]] core::Result<Measurement> MeasureCommand(const std::vector<gpu::Device*>& devices,
                                                       core::Clock* clock, const MeasureRun& run,
                                                       SeriesFile* series);

// summary.json (`summary` plus "inputs": the interval as given and `version`) and phases.csv into
// `dir`, which must exist.
[[nodiscard]] core::Status WriteMeasureDir(const std::string& dir,
                                           const nlohmann::ordered_json& summary,
                                           const std::string& interval, const std::string& version,
                                           const std::vector<report::PhaseSpan>& spans);

// Where the summary of a series written to FILE.csv or FILE.jsonl goes: FILE.summary.json.
std::string SummaryPathBeside(const std::string& series_path);

// Where `measure --report` writes when no --out is given.
inline constexpr const char* kDefaultMeasureDir = "headroom-measure";

// `headroom measure` as its flags give it.
struct MeasureRequest {
  std::string catalog_dir = {};  // empty: the built-in catalog
  BackendOptions backend = {};
  std::string interval = "100ms";
  std::string out = {};  // FILE.csv / FILE.jsonl, or a directory (no extension, or ending in /)
  bool report = false;
  double work = 0;
  std::string unit = "units";
  std::string work_regex = {};
  std::vector<std::string> command = {};
  std::string version = {};  // summary.json's
  std::function<void(const std::string&)> on_warning = {};
  // The summary, given before anything is saved: a measurement is shown even when its files
  // cannot be written.
  std::function<void(const report::MeasureSummary&, const nlohmann::ordered_json&)> on_measured =
      {};
};

struct MeasureResult {
  report::MeasureSummary summary;
  std::optional<std::string> report = {};  // report.html's path
};

// Runs the command on the backend's GPUs, then saves the --out directory (with its report) or
// the series file and the summary beside it. Errors name the flag for bad input; the command's
// own failure is in summary.exit_code and summary.error.
[[nodiscard]] core::Result<MeasureResult> Measure(const MeasureRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_MEASURE_H_
