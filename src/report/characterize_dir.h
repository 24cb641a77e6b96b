// The directory `headroom characterize --out DIR` writes, its writer, and its reader for the
// report. A simulated sweep writes:
//   results.csv      one row per (setting, shape): power, latency, energy per token
//   summary.json     per setting the changes against the default, the best under the SLO, and
//                    "inputs" (the flags that shaped the sweep)
//   power-trace.csv  setting,time_s,power_w: one run of the largest shape (inference: one
//                    request; training: the iterations) under the default, the lowest clock
//                    lock and the lowest power limit swept, one sensor reading per interval
// A command sweep (`characterize -- CMD`) writes results.csv (a row per setting: exit code, time,
// energy, power, work) and summary.json (its runs and the best under the SLO); it has no report.
// Reading is strict: a missing file or field is an error naming the file and the field (or the
// line and the column). Thread-compatible.
#ifndef HEADROOM_REPORT_CHARACTERIZE_DIR_H_
#define HEADROOM_REPORT_CHARACTERIZE_DIR_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "format/text_style.h"
#include "sim/characterize.h"
#include "sim/command_run.h"

namespace headroom::report {

inline constexpr const char* kResultsFile = "results.csv";
inline constexpr const char* kCharacterizeSummaryFile = "summary.json";
inline constexpr const char* kPowerTraceFile = "power-trace.csv";

struct CharacterizeInputs {
  std::string workload = {};  // inference or training
  std::string model = {};
  std::string gpu = {};
  std::string engine = {};    // inference: the engine calibration assumed, with its version
  int tp = 0;                 // inference
  std::string prompts = {};   // inference, as given
  std::string batches = {};   // inference, as given
  int output = 0;             // inference: tokens per request
  int iterations = 0;         // training
  std::string interval = {};  // sampling interval, as given
  double slo_fraction = 0;    // the largest acceptable latency increase
  std::string version = {};
};

// summary.json of a simulated sweep (also what `characterize --json` prints).
nlohmann::ordered_json CharacterizeSummaryJson(const CharacterizeInputs& inputs,
                                               const sim::SimulatedSweep& sweep);
// results.csv, summary.json and power-trace.csv into `dir`, created if need be.
[[nodiscard]] core::Status WriteCharacterizeDir(const std::string& dir,
                                                const sim::SimulatedSweep& sweep,
                                                const nlohmann::ordered_json& summary,
                                                bool inference);
// The table of changes per setting against the default and the best under the SLO.
// `slo_percent` as the user gave it (inputs.slo_fraction is its hundredth).
std::string CharacterizeText(const CharacterizeInputs& inputs, const sim::SimulatedSweep& sweep,
                             double slo_percent,
                             const format::TextStyle& style = format::TextStyle());

// The command sweep's summary.json (and --json), results.csv, and its table and verdict.
nlohmann::ordered_json CommandSweepJson(const std::vector<std::string>& command,
                                        const std::string& backend,
                                        const std::vector<sim::CommandRun>& runs,
                                        std::optional<size_t> best);
[[nodiscard]] core::Status WriteCommandSweepDir(const std::string& dir,
                                                const std::vector<sim::CommandRun>& runs,
                                                const nlohmann::ordered_json& summary);
std::string CommandSweepText(const std::vector<sim::CommandRun>& runs, std::optional<size_t> best,
                             double slo_percent,
                             const format::TextStyle& style = format::TextStyle());

enum class SweptKnob { kDefault, kClockLock, kPowerLimit };

// One setting on the largest shape (results.csv's last row for the setting).
struct SweepPoint {
  std::string setting = {};  // "default", "sm_clock=1260MHz", "power_limit=300W"
  SweptKnob knob = SweptKnob::kDefault;
  double value = 0;  // MHz or W
  double peak_power_w = 0, mean_power_w = 0;
  double latency_s = 0;  // inference: one request; training: one iteration
  double energy_per_unit_j = 0;
  double prefill_s = 0;  // inference
};

// summary.json's verdict per setting, changes against the default as fractions.
struct SettingVerdict {
  std::string setting = {};
  double worst_latency_increase = 0;
  double peak_power_change = 0;
  double energy_change = 0;
};

struct PowerTraceRun {
  std::string setting = {};
  std::vector<std::pair<double, double>> power = {};  // (s, W per GPU)
};

struct CharacterizeReport {
  CharacterizeInputs inputs;
  std::vector<SettingVerdict> settings;
  std::optional<std::string> best = {};  // the best setting under the SLO
  std::string shape = {};  // the largest shape, e.g. "TP 8, batch 8, prompt 8192, output 128"
  std::vector<SweepPoint> points;  // per setting, in sweep order
  std::vector<PowerTraceRun> traces;
  bool inference() const { return inputs.workload == "inference"; }
};

// kNotFound when `dir` or a file is missing; kInvalidArgument naming the file and the field.
[[nodiscard]] core::Result<CharacterizeReport> ReadCharacterizeDir(const std::string& dir);

// "Which SM clock lock or power limit runs llama2-70b inference on NVIDIA A100 ... at the lowest
// peak power while latency stays within +5% of the default?"
std::string CharacterizeQuestion(const CharacterizeReport& report);
// "sm_clock=1260MHz: peak power -18.2%, energy per token -9.1%, worst latency +4.2% (3 of 4
// settings keep the SLO)".
std::string CharacterizeAnswer(const CharacterizeReport& report);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_CHARACTERIZE_DIR_H_
