// TrainingScenario: a training row as one YAML file with `kind: training-row` (data/scenarios,
// compiled into the binary beside the inference rows; docs/training-row.md lists every key): the
// row (server type, count), one synchronized training job (a data/workloads/training.yaml
// workload, its checkpoints, the servers' skew), the simulation's step and length, the grid's
// limits on the row's ramps and swings, and the mitigations to weigh. A file of its own rather
// than a workload form of Scenario: Scenario is an inference row through and through (serving
// engine, request traces, policies, a plan's weeks and SLO), and none of it applies to a training
// job, nor this file's keys to it. Parsing is strict and checks names against the catalogs, so
// every error names file:line:field. Thread-compatible value types.
#ifndef HEADROOM_SIM_TRAINING_SCENARIO_H_
#define HEADROOM_SIM_TRAINING_SCENARIO_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/hardware_catalog.h"
#include "catalog/training_catalog.h"
#include "core/result.h"
#include "core/time.h"

namespace headroom::sim {

inline constexpr std::string_view kTrainingRowKind = "training-row";

// What the grid accepts of the row (absent: no limit). Ramps are over the ramp window, up or
// down; a band's share is of the AC part's variance, its amplitude that of a sine of equal RMS.
struct TrainingLimits {
  std::optional<double> max_ramp_w_per_s = {};
  std::optional<double> max_low_band_share = {};   // 0.1-2 Hz
  std::optional<double> max_high_band_share = {};  // 3-30 Hz
  std::optional<double> max_low_band_amplitude_w = {};
  std::optional<double> max_high_band_amplitude_w = {};
};

enum class MitigationKind { kNone, kClockLock, kPowerSmoothing };

struct Mitigation {
  std::string name = {};  // as given, or made from the settings ("clock-lock 1200 MHz")
  MitigationKind kind = MitigationKind::kNone;
  double clock_mhz = 0;  // kClockLock
  // kPowerSmoothing, per GPU.
  double floor_pct = 0;  // of TDP
  double ramp_up_w_per_s = 0;
  double ramp_down_w_per_s = 0;
  core::Duration ramp_down_hysteresis{0};
};

struct TrainingScenario {
  std::string name = {};
  std::string description = {};
  std::string source = {};
  std::string server = "dgx-a100";
  int servers = 1;
  std::string workload = {};           // data/workloads/training.yaml
  core::Duration checkpoint_every{0};  // 0: none
  core::Duration checkpoint_for{0};
  core::Duration skew{std::chrono::milliseconds(20)};
  core::Duration step{std::chrono::milliseconds(10)};
  core::Duration duration{std::chrono::minutes(10)};
  core::Duration ramp_window{std::chrono::seconds(1)};
  TrainingLimits limits = {};
  std::vector<Mitigation> mitigations = {};  // the first is what the others are compared with
  std::uint64_t seed = 1;
};

// The longest step that still resolves the 3-30 Hz band (Nyquist at 30 Hz would need 16.7 ms).
inline constexpr core::Duration kMaxTrainingStep = std::chrono::milliseconds(16);
inline constexpr int kMaxTrainingServers = 10'000;
// Steps x servers a simulation may take (a 40-server row for 4 h at 10 ms: 58 million).
inline constexpr double kMaxTrainingServerSteps = 2e9;

// The names (server, workload, a clock within the GPU's range) are checked against the catalogs.
[[nodiscard]] core::Result<TrainingScenario> ParseTrainingScenario(
    std::string_view text, std::string source, const catalog::HardwareCatalog& hardware,
    const catalog::TrainingCatalog& workloads);

// The `kind` a scenario file declares: empty for an inference row (no `kind` key).
[[nodiscard]] core::Result<std::string> ScenarioKindOf(std::string_view text, std::string source);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_TRAINING_SCENARIO_H_
