#include "app/mig_device_sweep.h"

#include <algorithm>
#include <chrono>
#include <csignal>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "core/subprocess.h"
#include "gpu/mig_apply.h"
#include "gpu/mig_restorer.h"
#include "mig/attribution.h"
#include "mig/enumerate.h"
#include "mig/layout.h"

namespace headroom::app {
namespace {

// How often the copies are polled: 20 ms is well under a copy's run time, cheap on the CPU.
constexpr auto kCopyPollInterval = std::chrono::milliseconds(20);
// How long a stopped copy has for SIGTERM before SIGKILL.
constexpr auto kTermGrace = std::chrono::seconds(5);

bool Stopped(const MigDeviceSweepOptions& o) { return o.stop != nullptr && o.stop->load(); }

void Nap(core::Clock& clock, const std::atomic<bool>* stop) {
  clock.SleepUntil(clock.Now() + kCopyPollInterval, stop);
}

// One copy of the command on one MIG instance (core::Subprocess), and when it ended. Its output
// passes straight through.
class InstanceCopy {
 public:
  static core::Result<InstanceCopy> Start(const std::vector<std::string>& argv,
                                          core::SpawnOptions options, core::Clock& clock) {
    HEADROOM_ASSIGN_OR_RETURN(core::Subprocess child, core::Subprocess::Start(argv, options));
    return InstanceCopy(std::move(child), clock);
  }
  // The exit code once it has ended; the first time it is seen ended, the time is kept.
  std::optional<int> Poll() {
    const std::optional<int> code = child_.Poll();
    if (code && !end_) end_ = clock_->Now();
    return code;
  }
  void Signal(int sig) const { child_.Signal(sig); }
  double Seconds(core::TimePoint start) const {
    return core::ToSeconds(end_.value_or(start) - start);
  }

 private:
  InstanceCopy(core::Subprocess child, core::Clock& clock)
      : child_(std::move(child)), clock_(&clock) {}
  core::Subprocess child_;
  core::Clock* clock_;
  std::optional<core::TimePoint> end_;
};

bool AllEnded(std::vector<InstanceCopy>& copies) {
  bool all = true;
  for (InstanceCopy& c : copies) all = c.Poll().has_value() && all;
  return all;
}

// Stops every copy: SIGTERM, then SIGKILL after the grace period.
void StopAll(std::vector<InstanceCopy>& copies, core::Clock& clock) {
  for (InstanceCopy& c : copies) c.Signal(SIGTERM);
  const core::TimePoint deadline = clock.Now() + kTermGrace;
  while (!AllEnded(copies) && clock.Now() < deadline) Nap(clock, nullptr);
  for (InstanceCopy& c : copies) c.Signal(SIGKILL);
  for (InstanceCopy& c : copies) {
    while (!c.Poll()) Nap(clock, nullptr);
  }
}

core::Result<double> EnergyNow(gpu::Device& device) {
  HEADROOM_ASSIGN_OR_RETURN(core::Joules e, device.EnergyCounter());
  return e.value();
}

// The layout's instances as rows, with the environment of each one's copy.
core::Result<std::vector<std::pair<mig::InstanceRun, core::SpawnOptions>>> Instances(
    gpu::Device& device, const mig::GpuMigSpec& spec, const std::string& layout) {
  HEADROOM_ASSIGN_OR_RETURN(std::vector<gpu::MigGpuInstance> gis, device.MigInstances());
  std::vector<std::pair<mig::InstanceRun, core::SpawnOptions>> out;
  for (const gpu::MigGpuInstance& gi : gis) {
    const mig::GiProfile* profile = spec.FindProfileById(gi.profile_id);
    for (const gpu::MigComputeInstance& ci : gi.compute_instances) {
      mig::InstanceRun row{
          .layout = layout,
          .slice = fmt::format("{}@{}", profile ? profile->name : "?", gi.start),
          .uuid = ci.uuid,
          .sm_count = ci.sm_count > 0 ? ci.sm_count : (profile ? profile->sm_count : 0)};
      if (row.uuid.empty()) {
        return core::Fail(core::Error::Unavailable(
            fmt::format("{}: the driver gave no MIG device UUID for {}", layout, row.slice)));
      }
      core::SpawnOptions env{.extra_env = {{"CUDA_VISIBLE_DEVICES", row.uuid},
                                           {"HEADROOM_MIG_SLICE", row.slice},
                                           {"HEADROOM_MIG_INSTANCE", std::to_string(out.size())}}};
      out.emplace_back(std::move(row), std::move(env));
    }
  }
  return out;
}

// Starts a copy per instance and waits for all of them (stopping them on a stop request).
core::Result<std::vector<InstanceCopy>> RunCopies(
    const std::vector<std::pair<mig::InstanceRun, core::SpawnOptions>>& instances,
    core::Clock& clock, const MigDeviceSweepOptions& o) {
  std::vector<InstanceCopy> copies;
  for (const auto& [row, env] : instances) {
    auto copy = InstanceCopy::Start(o.command, env, clock);
    if (!copy) {
      StopAll(copies, clock);
      return core::Fail(copy.error());
    }
    copies.push_back(std::move(*copy));
  }
  while (!AllEnded(copies)) {
    if (Stopped(o)) {
      StopAll(copies, clock);
      return core::Fail(core::Error::Cancelled("interrupted"));
    }
    Nap(clock, o.stop);
  }
  return copies;
}

core::Result<mig::LayoutRun> RunLayout(gpu::Device& device, const mig::GpuMigSpec& spec,
                                       core::Clock& clock, const mig::Layout& layout,
                                       const MigDeviceSweepOptions& o, double idle_w) {
  HEADROOM_ASSIGN_OR_RETURN(gpu::MigApplyReport applied,
                            gpu::ApplyMigLayout(device, spec, layout, {}));
  if (!applied.ok()) return core::Fail(*applied.error);
  mig::LayoutRun run{.layout = mig::FormatLayout(layout)};
  HEADROOM_ASSIGN_OR_RETURN(auto instances, Instances(device, spec, run.layout));
  HEADROOM_ASSIGN_OR_RETURN(const double e0, EnergyNow(device));
  const core::TimePoint start = clock.Now();
  HEADROOM_ASSIGN_OR_RETURN(std::vector<InstanceCopy> copies, RunCopies(instances, clock, o));
  run.window_s = core::ToSeconds(clock.Now() - start);
  HEADROOM_ASSIGN_OR_RETURN(const double e1, EnergyNow(device));
  run.energy_j = std::max(0.0, e1 - e0);
  std::vector<mig::InstanceUse> uses;
  for (size_t i = 0; i < copies.size(); ++i) {
    mig::InstanceRun& row = instances[i].first;
    row.exit_code = *copies[i].Poll();
    row.seconds = copies[i].Seconds(start);
    uses.push_back({.sm_count = row.sm_count, .busy_s = row.seconds, .has_job = true});
  }
  const mig::EnergyShares shares = mig::AttributeEnergy(run.energy_j, idle_w, run.window_s, uses);
  for (size_t i = 0; i < instances.size(); ++i) {
    instances[i].first.energy_activity_j = shares.activity_j[i];
    instances[i].first.energy_sm_share_j = shares.sm_share_j[i];
    run.instances.push_back(std::move(instances[i].first));
  }
  return run;
}

// Turns MIG mode on when it is off and enable_mig allows; the restorer turns it back off.
core::Status EnsureMigMode(gpu::Device& device, const MigDeviceSweepOptions& o,
                           std::optional<gpu::MigModeRestorer>& restorer) {
  HEADROOM_ASSIGN_OR_RETURN(const gpu::MigModeState mode, device.MigMode());
  if (mode.current) return core::Ok();
  const int index = device.info().index;
  if (!o.enable_mig) {
    return core::Fail(core::Error::FailedPrecondition(fmt::format(
        "GPU {}: MIG mode is disabled; enable it first (as root: nvidia-smi -i {} -mig 1, then "
        "reset the GPU if nvidia-smi asks), or pass --enable-mig to have headroom turn it on "
        "for the sweep and off after",
        index, index)));
  }
  auto enabled = device.SetMigMode(true);
  if (!enabled) return core::Fail(enabled.error().WithContext("--enable-mig"));
  if (!enabled->current) {
    (void)device.SetMigMode(false);  // leave no pending change behind
    return core::Fail(core::Error::FailedPrecondition(fmt::format(
        "--enable-mig: GPU {} needs a reset before MIG mode takes effect, and headroom never "
        "resets GPUs; enable it with nvidia-smi -i {} -mig 1, reset the GPU, then run without "
        "--enable-mig",
        index, index)));
  }
  restorer.emplace(device, [on_error = o.on_error](const core::Error& e) {
    if (on_error) on_error("turning MIG mode back off failed: " + e.message());
  });
  return core::Ok();
}

// Idle power: the energy counter over a quiet window, on the layout found.
core::Result<double> MeasureIdle(gpu::Device& device, core::Clock& clock,
                                 const MigDeviceSweepOptions& o) {
  HEADROOM_ASSIGN_OR_RETURN(const double e0, EnergyNow(device));
  const core::TimePoint start = clock.Now();
  clock.SleepUntil(start + core::FromSeconds(o.idle_s), o.stop);
  HEADROOM_ASSIGN_OR_RETURN(const double e1, EnergyNow(device));
  return (e1 - e0) / core::ToSeconds(clock.Now() - start);
}

// The layouts given, or the equal-instance ones.
core::Result<std::vector<mig::Layout>> LayoutsToSweep(const mig::GpuMigSpec& spec,
                                                      const MigDeviceSweepOptions& o) {
  auto layouts = mig::ParseValidLayouts(spec, o.layouts);
  if (!layouts) return core::Fail(layouts.error().WithContext("--layout"));
  if (layouts->empty()) {
    for (auto& [count, layout] : mig::EqualInstanceLayouts(spec)) layouts->push_back(layout);
  }
  return layouts;
}

core::Status RefuseBusyGpu(gpu::Device& device) {
  auto processes = device.RunningProcesses();
  if (processes && !processes->empty()) {
    return core::Fail(core::Error::FailedPrecondition(
        fmt::format("GPU {}: {} compute processes are running; characterize needs the GPU to "
                    "itself",
                    device.info().index, processes->size())));
  }
  return core::Ok();
}

}  // namespace

core::Result<mig::DeviceSweep> RunMigDeviceSweep(gpu::Device& device, const mig::GpuMigSpec& spec,
                                                 core::Clock& clock,
                                                 const MigDeviceSweepOptions& o) {
  std::optional<gpu::MigModeRestorer> mode_restorer;
  HEADROOM_RETURN_IF_ERROR(EnsureMigMode(device, o, mode_restorer));
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<mig::Layout> layouts, LayoutsToSweep(spec, o));
  HEADROOM_ASSIGN_OR_RETURN(const auto state, gpu::ReadMigState(device, spec));
  HEADROOM_RETURN_IF_ERROR(RefuseBusyGpu(device));
  // Declared after mode_restorer, so the layout goes back before MIG mode is turned off.
  gpu::LayoutRestorer restorer(device, spec, gpu::RestorableLayout(state));
  mig::DeviceSweep sweep{.original_layout = mig::FormatLayout(restorer.original())};
  HEADROOM_ASSIGN_OR_RETURN(sweep.idle_w, MeasureIdle(device, clock, o));
  for (const mig::Layout& layout : layouts) {
    if (Stopped(o)) break;
    if (o.on_layout) o.on_layout(mig::FormatLayout(layout));
    auto run = RunLayout(device, spec, clock, layout, o, sweep.idle_w);
    if (!run) {
      const core::Error error = run.error().WithContext(mig::FormatLayout(layout));
      if (auto st = restorer.Restore(); !st && o.on_error) {
        o.on_error("restoring the original layout failed: " + st.error().message());
      }
      return core::Fail(error);
    }
    sweep.runs.push_back(std::move(*run));
  }
  if (auto st = restorer.Restore(); !st) {
    return core::Fail(st.error().WithContext(
        fmt::format("restoring the original layout '{}'", sweep.original_layout)));
  }
  if (Stopped(o)) {
    return core::Fail(core::Error::Cancelled(
        fmt::format("interrupted; the original layout '{}' is restored", sweep.original_layout)));
  }
  return sweep;
}

}  // namespace headroom::app
