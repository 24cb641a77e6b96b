// The sweep of `characterize -- CMD` on real (or fake, or simulated) GPUs: the user's command run
// to completion under each setting (the default, SM clock locks, power limits) while a Sampler
// measures the GPUs, each run reduced to its time, energy and power, and the best setting under
// a latency SLO. Every GPU's power limit and clock lock are restored on every exit path (the
// ControlRestorer). Not thread-safe (one run at a time: signal forwarding is process-wide).
#ifndef HEADROOM_APP_COMMAND_SWEEP_H_
#define HEADROOM_APP_COMMAND_SWEEP_H_

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
#include "sim/command_run.h"
#include "telemetry/measured_run.h"

namespace headroom::app {

// Energy over all GPUs, the highest peak and longest time capped of any GPU, the mean power per
// GPU, the p99 of the instant-power samples, and the work counted.
sim::CommandRun ReduceRun(const sim::Setting& setting, const telemetry::MeasuredRunResult& run);

// The bounds of what can be swept, read from the device itself (not the catalog): its
// power-limit range and its supported SM clocks. kUnimplemented when it reports neither.
[[nodiscard]] core::Result<model::GpuSpec> DeviceSweepBounds(gpu::Device& device);

// Restores what `restorer` saved, then applies `setting` to every device (the default setting is
// the saved one).
[[nodiscard]] core::Status ApplySetting(const sim::Setting& setting,
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
[[nodiscard]] core::Result<std::vector<sim::CommandRun>> RunCommandSweep(
    const std::vector<gpu::Device*>& devices, core::Clock* clock,
    const std::vector<sim::Setting>& settings, const CommandSweepOptions& options);

}  // namespace headroom::app

#endif  // HEADROOM_APP_COMMAND_SWEEP_H_
