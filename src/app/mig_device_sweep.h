// The MIG characterization on a device (`headroom mig characterize -- COMMAND`): applies each
// layout, runs the command once per MIG instance concurrently (CUDA_VISIBLE_DEVICES set to the
// instance's MIG device UUID), measures whole-GPU energy over the copies' window and idle power
// before the sweep, attributes the energy to the instances (mig/attribution), and restores the
// original layout, and MIG mode when the sweep turned it on, at the end, on errors and on stop.
// All time is read through the injected Clock. Not thread-safe.
#ifndef HEADROOM_APP_MIG_DEVICE_SWEEP_H_
#define HEADROOM_APP_MIG_DEVICE_SWEEP_H_

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "gpu/device.h"
#include "mig/device_sweep.h"
#include "mig/profile.h"

namespace headroom::app {

struct MigDeviceSweepOptions {
  std::vector<std::string> layouts = {};  // canonical text; empty: the equal-instance layouts
  std::vector<std::string> command = {};
  double idle_s = 3;        // idle window measured before the sweep
  bool enable_mig = false;  // turn MIG mode on for the sweep (and off after) if it is off
  const std::atomic<bool>* stop = nullptr;  // when it turns true: stop the copies, restore
  std::function<void(const std::string& layout)> on_layout = {};  // before each layout
  // Errors that cannot be returned: a restore that failed while another error is returned,
  // turning MIG mode back off.
  std::function<void(const std::string& message)> on_error = {};
};

// Refuses, changing nothing: MIG mode off without enable_mig, or a reset needed to turn it on
// (kFailedPrecondition saying how to enable it); an invalid layout (kInvalidArgument, "--layout");
// compute processes running. Errors after that name the layout, and the original layout is
// restored before returning; a stop is kCancelled.
// REQUIRES: `spec` is the device's MIG entry; options.command is not empty.
[[nodiscard]] core::Result<mig::DeviceSweep> RunMigDeviceSweep(
    gpu::Device& device, const mig::GpuMigSpec& spec, core::Clock& clock,
    const MigDeviceSweepOptions& options);

}  // namespace headroom::app

#endif  // HEADROOM_APP_MIG_DEVICE_SWEEP_H_
