// Characterization on simulated GPUs: runs LLM inference requests and training iterations under
// each setting (the default, SM clock locks, power limits) through a SimDevice and the telemetry
// Sampler, the same path as real GPUs, and reduces each run to a row of peak / mean / p99 power,
// latency or throughput, energy per token or per sample, and time power-capped.
// Thread-compatible (each call builds its own devices and virtual clock).
#ifndef HEADROOM_SIM_CHARACTERIZE_H_
#define HEADROOM_SIM_CHARACTERIZE_H_

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "model/inference_model.h"
#include "model/training_model.h"
#include "telemetry/sampler.h"

namespace headroom::sim {

struct Setting {
  enum class Kind { kDefault, kClockLock, kPowerLimit };
  Kind kind = Kind::kDefault;
  double value = 0;  // MHz or W
  std::string Label() const;
};

struct InferenceCase {
  int tp = 8;
  int batch = 1;
  int prompt = 1024;
  int output = 128;
};

struct Row {
  Setting setting;
  InferenceCase shape;      // inference only
  double peak_power_w = 0;  // per GPU, highest sensor reading
  double mean_power_w = 0;
  double p99_power_w = 0;
  double prefill_s = 0;          // inference
  double decode_step_s = 0;      // inference
  double latency_s = 0;          // inference: prefill + output decode steps; training: an iteration
  double energy_per_unit_j = 0;  // per output token (inference) or per training token, all GPUs
  double time_capped_s = 0;
  double duration_s = 0;
  std::string energy_source;
};

// What a sweep runs under: the default first, then a lock at each clock, then each power limit.
std::vector<Setting> SweepSettings(std::span<const core::Megahertz> clocks,
                                   std::span<const core::Watts> limits);

// The shapes of `batches` x `prompts`, batch-major, each at `tp` and `output` tokens.
std::vector<InferenceCase> InferenceGrid(int tp, std::span<const int> batches,
                                         std::span<const int> prompts, int output);

// The q-quantile (0..1) of `values`, nearest rank; 0 for none.
double Percentile(std::vector<double> values, double q);

// A settled row per (setting, shape). Sampled every `interval` of virtual time.
[[nodiscard]] core::Result<std::vector<Row>> CharacterizeInference(
    const model::InferenceModel& model, const std::vector<Setting>& settings,
    const std::vector<InferenceCase>& shapes, core::Duration interval);

[[nodiscard]] core::Result<std::vector<Row>> CharacterizeTraining(
    const model::TrainingModel& model, const std::vector<Setting>& settings, int iterations,
    core::Duration interval);

// Power samples of one run over time, for plots: (seconds, watts) per sensor reading.
struct Trace {
  std::string label;
  std::vector<std::pair<double, double>> power;
};
[[nodiscard]] core::Result<Trace> TraceInference(const model::InferenceModel& model,
                                                 const Setting& setting, const InferenceCase& shape,
                                                 core::Duration interval);

[[nodiscard]] core::Result<Trace> TraceTraining(const model::TrainingModel& model,
                                                const Setting& setting, int iterations,
                                                core::Duration interval);

// Per setting over all shapes: the worst latency increase and peak-power change against the
// default (the first setting), and the mean energy change, as fractions.
struct SettingSummary {
  std::string label;
  double worst_slowdown = 0;
  double peak_change = 0;  // the largest peak over shapes, relative to the default's
  double energy_change = 0;
};

// `rows` in sweep order, `shapes` rows per setting, the default's first.
std::vector<SettingSummary> Summarize(const std::vector<Row>& rows, size_t shapes);

// The index of the setting with the lowest peak whose worst latency increase stays within
// `slo_fraction` (0.05: +5%); nullopt when none does.
std::optional<size_t> BestUnderSlo(const std::vector<SettingSummary>& summary, double slo_fraction);

// The settings whose power is traced for plots: the default, and the lowest clock lock and the
// lowest power limit swept.
std::vector<Setting> TracedSettings(const std::vector<Setting>& settings);

// A whole simulated sweep: a row per (setting, shape), the verdict per setting, the best under
// the SLO and, when asked, the traces of TracedSettings on the largest shape.
struct SimulatedSweep {
  std::vector<Row> rows = {};
  size_t shapes = 1;
  std::vector<SettingSummary> summary = {};
  std::optional<size_t> best = {};  // into summary
  std::vector<Trace> traces = {};
};

struct SweepOptions {
  double slo_fraction = 0.05;
  core::Duration interval{std::chrono::milliseconds(10)};
  bool traces = false;
};

// `shapes` in the order given; the last is the one traced.
[[nodiscard]] core::Result<SimulatedSweep> SweepInference(const model::InferenceModel& model,
                                                          const std::vector<Setting>& settings,
                                                          const std::vector<InferenceCase>& shapes,
                                                          const SweepOptions& options);

[[nodiscard]] core::Result<SimulatedSweep> SweepTraining(const model::TrainingModel& model,
                                                         const std::vector<Setting>& settings,
                                                         int iterations,
                                                         const SweepOptions& options);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_CHARACTERIZE_H_
