// The directory `headroom measure --out DIR` writes, read back for its report:
//   summary.json  MeasureJson plus "inputs" (the sampling interval, headroom's version)
//   series.csv    the sampled time series, one line per GPU per sample (monitor's CSV columns)
//   phases.csv    name,start_s,end_s: when each phase the program marked began and ended
// Reading is strict: a missing file or field is an error naming the file and the field (or the
// line and the column). Thread-compatible.
#ifndef HEADROOM_REPORT_MEASURE_DIR_H_
#define HEADROOM_REPORT_MEASURE_DIR_H_

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "report/reductions.h"

namespace headroom::report {

inline constexpr const char* kMeasureSummaryFile = "summary.json";
inline constexpr const char* kSeriesFile = "series.csv";
inline constexpr const char* kPhasesFile = "phases.csv";

// phases.csv's content.
std::string PhaseSpansCsv(const std::vector<PhaseSpan>& spans);

struct MeasureReport {
  std::vector<std::string> command = {};
  std::string backend = {};
  int exit_code = 0;
  std::string error = {};  // why the measurement ended early; empty: complete
  double duration_s = 0;
  std::string interval = {};
  std::string version = {};
  struct Gpu {
    int index = 0;
    std::string name = {};
    std::string energy_source = {};
    double energy_j = 0, avg_power_w = 0, peak_power_w = 0, capped_s = 0, throttled_s = 0;
  };
  std::vector<Gpu> gpus;
  double energy_j = 0;  // all GPUs
  double avg_power_w = 0;
  double work = 0;  // 0: none reported
  std::string unit = {};
  struct Phase {
    std::string name = {};
    double duration_s = 0, energy_j = 0, avg_power_w = 0, work = 0;
    std::optional<double> energy_per_unit_j = {};
  };
  std::vector<Phase> phases;  // totals over GPUs, in order of first appearance
  std::vector<PhaseSpan> spans;
  std::vector<Point> power;  // (s, W) summed over the GPUs per sampling round
};

// kNotFound when `dir` or a file is missing; kInvalidArgument naming the file and the field.
[[nodiscard]] core::Result<MeasureReport> ReadMeasureDir(const std::string& dir);

// "How much energy and power did `CMD` take on 2 GPUs, and in which phase?"
std::string MeasureQuestion(const MeasureReport& report);
// "812.4 J in 4.00 s: 203.1 W on average (peak 398.0 W); prefill 390 W, decode 180 W; 2.03 J
// per token".
std::string MeasureAnswer(const MeasureReport& report);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MEASURE_DIR_H_
