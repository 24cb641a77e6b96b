// The sweep of `characterize -- CMD` on real (or fake, or simulated) GPUs: the user's command run
// to completion under each setting (the default, SM clock locks, power limits) while a Sampler
// measures the GPUs, each run reduced to its time, energy and power, and the best setting under
// a latency SLO. Every GPU's power limit and clock lock are restored on every exit path (the
// ControlRestorer). Not thread-safe (one run at a time: signal forwarding is process-wide).
#ifndef HEADROOM_SIM_COMMAND_SWEEP_H_
#define HEADROOM_SIM_COMMAND_SWEEP_H_

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "gpu/control_restorer.h"
#include "gpu/device.h"
#include "model/gpu_spec.h"
#include "sim/characterize.h"
#include "telemetry/measured_run.h"

namespace headroom::sim {

// One run of the command under one setting.
struct CommandRun {
  Setting setting = {};
  int exit_code = 0;
  double duration_s = 0, energy_j = 0, peak_w = 0, mean_w = 0, p99_w = 0, capped_s = 0, work = 0;
};

// Energy over all GPUs, the highest peak and longest time capped of any GPU, the mean power per
// GPU, the p99 of the instant-power samples, and the work counted.
CommandRun ReduceRun(const Setting& setting, const telemetry::MeasuredRunResult& run);

// The run with the lowest peak whose duration stays within `slo_fraction` of the first run's
// (the default setting); nullopt when none does.
std::optional<size_t> BestCommandRun(const std::vector<CommandRun>& runs, double slo_fraction);

// The bounds of what can be swept, read from the device itself (not the catalog): its
// power-limit range and its supported SM clocks. kUnimplemented when it reports neither.
[[nodiscard]] core::Result<model::GpuSpec> DeviceSweepBounds(gpu::Device& device);

// Restores what `restorer` saved, then applies `setting` to every device (the default setting is
// the saved one).
[[nodiscard]] core::Status ApplySetting(const Setting& setting,
                                        const std::vector<gpu::Device*>& devices,
                                        gpu::ControlRestorer& restorer);

struct CommandSweepOptions {
  std::vector<std::string> command;
  core::Duration interval{std::chrono::milliseconds(10)};
  // How long to let clocks and the sensor's 25-100 ms windows settle after a change, so that
  // the first readings are not of the previous setting.
  core::Duration settle{std::chrono::milliseconds(500)};
  const std::atomic<bool>* stop = nullptr;                  // cuts a settle wait short
  std::function<void(const std::string&)> note = {};        // progress and restorations
  std::function<void(const std::string&)> on_warning = {};  // passed to the measured runs
};

// Runs the command under each setting, in order. A command killed by SIGINT/SIGTERM ends the
// sweep early with the runs so far; any other non-zero exit is an error naming the setting.
// The GPUs' settings are restored before it returns, whatever happens.
[[nodiscard]] core::Result<std::vector<CommandRun>> RunCommandSweep(
    const std::vector<gpu::Device*>& devices, core::Clock* clock,
    const std::vector<Setting>& settings, const CommandSweepOptions& options);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_COMMAND_SWEEP_H_
