// The directory `headroom measure --out DIR` writes, read back for its report:
//   summary.json  MeasureJson (MeasureReportJson) plus "inputs" (the sampling interval,
//                 headroom's version)
//   series.csv    the sampled time series, one line per GPU per sample (monitor's CSV columns)
//   phases.csv    name,start_s,end_s: when each phase the program marked began and ended
// Reading is strict: a missing file or field is an error naming the file and the field (or the
// line and the column). Thread-compatible.
#ifndef HEADROOM_REPORT_MEASURE_DIR_H_
#define HEADROOM_REPORT_MEASURE_DIR_H_

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "report/reductions.h"

namespace headroom::report {

inline constexpr const char* kMeasureSummaryFile = "summary.json";
inline constexpr const char* kSeriesFile = "series.csv";
inline constexpr const char* kPhasesFile = "phases.csv";

// phases.csv's content.
std::string PhaseSpansCsv(const std::vector<PhaseSpan>& spans);

// What summary.json holds (MeasureJson writes it, ReadMeasureDir reads it back through the same
// field table), and the series and phases read from the CSV files beside it.
struct MeasureReport {
  std::vector<std::string> command = {};
  int exit_code = 0;
  std::string backend = {};
  std::optional<std::string> error = {};  // why the measurement ended early; nullopt: complete
  double duration_s = 0;
  struct Gpu {
    int index = 0;
    std::string uuid = {};
    std::string name = {};
    double energy_j = 0;
    std::string energy_source = {};
    std::string energy_source_note = {};
    std::optional<double> counter_energy_j = {};
    std::optional<double> integrated_energy_j = {};
    std::optional<double> counter_vs_integration = {};  // |counter - integrated| / counter
    std::optional<double> counter_update_period_s = {};
    bool counter_update_period_is_upper_bound = false;
    int counter_resets = 0;
    std::string power_reading = {};  // "instant" or "1s-average"
    double duration_s = 0;
    double avg_power_w = 0, peak_power_w = 0, capped_s = 0, throttled_s = 0;
    int samples = 0;
    int driver_power_samples = 0;
  };
  std::vector<Gpu> gpus = {};
  double energy_j = 0;  // all GPUs
  double avg_power_w = 0;
  double peak_power_sum_w = 0;
  struct Work {
    double units = 0;
    std::string unit = {};
    double throughput_per_s = 0;
    double energy_per_unit_j = 0;
  };
  std::optional<Work> work = {};  // nullopt: none reported
  struct Phase {
    std::string name = {};
    double duration_s = 0, energy_j = 0, avg_power_w = 0, work = 0;
    std::optional<double> energy_per_unit_j = {};
  };
  std::vector<Phase> phases = {};  // totals over GPUs, in order of first appearance
  // "inputs" (the measure command adds them when it writes the directory).
  std::string interval = {};
  std::string version = {};

  std::vector<PhaseSpan> spans = {};  // phases.csv
  std::vector<Point> power = {};      // series.csv: (s, W) summed over the GPUs per round

  // The work's unit, "" without work.
  std::string unit() const { return work ? work->unit : ""; }
};

// summary.json's content without its "inputs".
nlohmann::ordered_json MeasureReportJson(const MeasureReport& report);
// {"inputs": {"interval", "version"}}: what `measure --out` adds to the summary, written through
// the field table ReadMeasureDir reads it with.
nlohmann::ordered_json MeasureInputsJson(const std::string& interval, const std::string& version);

// kNotFound when `dir` or a file is missing; kInvalidArgument naming the file and the field.
[[nodiscard]] core::Result<MeasureReport> ReadMeasureDir(const std::string& dir);

// "How much energy and power did `CMD` take on 2 GPUs, and in which phase?"
std::string MeasureQuestion(const MeasureReport& report);
// "812.4 J in 4.00 s: 203.1 W on average (peak 398.0 W); prefill 390 W, decode 180 W; 2.03 J
// per token".
std::string MeasureAnswer(const MeasureReport& report);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MEASURE_DIR_H_
