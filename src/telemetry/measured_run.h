// MeasuredRun: runs a command while a Sampler measures the given GPUs, with the
// $HEADROOM_MARKERS FIFO and optional work counting from the command's output. The one path by
// which `measure` and the command sweep of `characterize` run a user's program.
// Not thread-safe (one run at a time: signal forwarding is process-wide).
#ifndef HEADROOM_TELEMETRY_MEASURED_RUN_H_
#define HEADROOM_TELEMETRY_MEASURED_RUN_H_

#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "gpu/device.h"
#include "telemetry/sampler.h"

namespace headroom::telemetry {

struct MeasuredRunOptions {
  std::vector<std::string> command;
  core::Duration interval{std::chrono::milliseconds(100)};
  std::optional<std::regex> work_pattern = {};   // adds each match's first group (or whole match)
  std::function<void(const Sample&)> sink = {};  // every sample, as it is taken
  // Every 'phase NAME' marker, after the sampler has it (its time is the caller's to take).
  std::function<void(const std::string&)> on_phase = {};
  // Malformed marker lines and a sampling error that stopped the measurement (the run goes on).
  std::function<void(const std::string&)> on_warning = {};
};

struct MeasuredRunResult {
  int exit_code = 0;
  double duration_s = 0;
  std::unique_ptr<Sampler> sampler;  // stopped; holds reports, phases, work, samples
};

// Runs the command to completion. kNotFound when the program cannot start; a GPU error during
// the run stops the sampling (kept in sampler->error()) but not the command.
[[nodiscard]] core::Result<MeasuredRunResult> RunMeasured(const std::vector<gpu::Device*>& devices,
                                                          core::Clock* clock,
                                                          const MeasuredRunOptions& options);

}  // namespace headroom::telemetry

#endif  // HEADROOM_TELEMETRY_MEASURED_RUN_H_
