// SimDevice: a Device backed by a SimGpu, read through a core::Clock (virtual for tests and
// deterministic runs, the system clock for interactive use). Every call first advances the GPU
// to the clock's present. Thread-safe.
#ifndef HEADROOM_GPU_SIM_SIM_DEVICE_H_
#define HEADROOM_GPU_SIM_SIM_DEVICE_H_

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "core/thread_annotations.h"
#include "core/time.h"
#include "gpu/device.h"
#include "gpu/sim/sim_gpu.h"
#include "gpu/sim/sim_mig.h"
#include "mig/profile.h"

namespace headroom::gpu::sim {

struct SimOptions {
  LoadScript script = LoadScript::Idle();
  // Controls fail with kPermissionDenied, as NVML's setters do for a non-root user.
  bool controls_denied = false;
  // Reads that fail with kUnimplemented, to exercise capability handling: any of
  // "power_instant", "power_average", "energy", "power_samples", "sm_clock", "memory_clock",
  // "supported_clocks", "utilization", "temperature", "memory", "power_limits", "throttle_reasons",
  // "clock_lock".
  std::set<std::string> unsupported;
  // The GPU type's MIG profiles; absent: a GPU without MIG (its MIG calls are kUnimplemented).
  std::optional<mig::GpuMigSpec> mig;
  // MIG mode at start, when `mig` is set. On, with no instances, so that a simulated GPU can
  // be partitioned at once (real GPUs need root and a reset to turn it on).
  bool mig_enabled = true;
  // Pretend compute processes; one with a GPU-instance id blocks destroying that instance, one
  // without blocks destroying any.
  std::vector<GpuProcess> processes;
  // Power smoothing, as on Blackwell and later (no GPU type in the catalog has it yet, so it is
  // asked for): the presets of kSimPowerSmoothingPresets, off at start with profile 0 active.
  bool power_smoothing = false;
};

// The simulated GPU's power-smoothing presets: the simulator's own spread from no floor and fast
// ramps to a high floor and slow ramps, not NVIDIA's factory values (which the driver reports).
inline const std::vector<PowerSmoothingProfile> kSimPowerSmoothingPresets = {
    {.floor_percent = 0,
     .ramp_up_w_per_s = 2000,
     .ramp_down_w_per_s = 2000,
     .ramp_down_hysteresis_ms = 0},
    {.floor_percent = 30,
     .ramp_up_w_per_s = 1000,
     .ramp_down_w_per_s = 500,
     .ramp_down_hysteresis_ms = 500},
    {.floor_percent = 50,
     .ramp_up_w_per_s = 500,
     .ramp_down_w_per_s = 250,
     .ramp_down_hysteresis_ms = 1000},
    {.floor_percent = 65,
     .ramp_up_w_per_s = 250,
     .ramp_down_w_per_s = 100,
     .ramp_down_hysteresis_ms = 2000},
    {.floor_percent = 80,
     .ramp_up_w_per_s = 100,
     .ramp_down_w_per_s = 50,
     .ramp_down_hysteresis_ms = 5000},
};
// The settable floor, % of TDP (NVIDIA's application note on Blackwell power smoothing: 0-90%).
inline constexpr double kSimPowerSmoothingFloorMaxPercent = 90;

class SimDevice final : public Device {
 public:
  // REQUIRES: clock outlives the device.
  SimDevice(int index, const model::GpuSpec& spec, core::Clock* clock, SimOptions options);

  const DeviceInfo& info() const override { return info_; }

  core::Result<core::Watts> PowerInstant() override EXCLUDES(mu_);
  core::Result<core::Watts> PowerAverage() override EXCLUDES(mu_);
  core::Result<core::Joules> EnergyCounter() override EXCLUDES(mu_);
  core::Result<std::vector<PowerSample>> PowerSamples(std::uint64_t after_us) override
      EXCLUDES(mu_);
  core::Result<core::Megahertz> SmClock() override EXCLUDES(mu_);
  core::Result<core::Megahertz> MemoryClock() override EXCLUDES(mu_);
  core::Result<std::vector<core::Megahertz>> SupportedSmClocks() override EXCLUDES(mu_);
  core::Result<UtilizationRates> Utilization() override EXCLUDES(mu_);
  core::Result<core::Celsius> Temperature() override EXCLUDES(mu_);
  core::Result<MemoryUsage> Memory() override EXCLUDES(mu_);
  core::Result<PowerLimitState> PowerLimits() override EXCLUDES(mu_);
  core::Result<std::uint64_t> ThrottleReasons() override EXCLUDES(mu_);
  core::Result<std::optional<ClockLock>> SmClockLock() override EXCLUDES(mu_);

  core::Status SetPowerLimit(core::Watts limit) override EXCLUDES(mu_);
  core::Status ResetPowerLimit() override EXCLUDES(mu_);
  core::Status LockSmClocks(core::Megahertz min, core::Megahertz max) override EXCLUDES(mu_);
  core::Status ResetSmClocks() override EXCLUDES(mu_);

  core::Result<MigModeState> MigMode() override EXCLUDES(mu_);
  core::Result<std::vector<MigGpuInstance>> MigInstances() override EXCLUDES(mu_);
  // The catalog's profiles, whatever the MIG mode.
  core::Result<std::vector<MigProfileInfo>> MigProfiles() override EXCLUDES(mu_);
  core::Result<int> CreateGpuInstance(int profile_id, int start) override EXCLUDES(mu_);
  core::Result<int> CreateComputeInstance(int gpu_instance_id, int compute_slices) override
      EXCLUDES(mu_);
  core::Status DestroyComputeInstance(int gpu_instance_id, int compute_instance_id) override
      EXCLUDES(mu_);
  core::Status DestroyGpuInstance(int gpu_instance_id) override EXCLUDES(mu_);
  core::Result<MigModeState> SetMigMode(bool enabled) override EXCLUDES(mu_);
  core::Result<std::vector<GpuProcess>> RunningProcesses() override;

  core::Result<PowerSmoothingState> PowerSmoothing() override EXCLUDES(mu_);
  core::Status SetPowerSmoothingEnabled(bool enabled) override EXCLUDES(mu_);
  core::Status ActivatePowerSmoothingProfile(int profile) override EXCLUDES(mu_);
  core::Status UpdatePowerSmoothingProfile(int profile, const PowerSmoothingUpdate& update) override
      EXCLUDES(mu_);

  // Simulation-only: replaces the MIG state, ids included (SimMig::Restore), e.g. a driver's
  // state carried from an earlier process.
  core::Status RestoreMig(bool enabled, const std::vector<MigGpuInstance>& instances) EXCLUDES(mu_);

  // Simulation-only: the exact energy the GPU drew, with no sensor artefacts, and a new load.
  core::Joules TrueEnergy() EXCLUDES(mu_);
  void SetScript(LoadScript script) EXCLUDES(mu_);

 private:
  // Advances the GPU to now and checks that `read` is supported.
  core::Status Sync(const char* read) REQUIRES(mu_);
  core::Status CheckControl(const char* what) const;
  // The MIG state, or kUnimplemented for a GPU without MIG.
  core::Result<SimMig*> Mig(const char* what) REQUIRES(mu_);
  // The smoothing state, or kUnimplemented for a GPU without it.
  core::Result<PowerSmoothingState*> Smoothing(const char* what) REQUIRES(mu_);
  // Hands the GPU the smoothing now in force.
  void ApplySmoothing() REQUIRES(mu_);

  const DeviceInfo info_;
  const model::GpuSpec spec_;
  core::Clock* const clock_;
  const SimOptions options_;

  core::Mutex mu_;
  SimGpu gpu_ GUARDED_BY(mu_);
  core::TimePoint last_sync_ GUARDED_BY(mu_);
  std::optional<SimMig> mig_ GUARDED_BY(mu_);
  std::optional<PowerSmoothingState> smoothing_ GUARDED_BY(mu_);

  // Declared after mu_ so that the lock annotation can name it.
  // Locks, syncs, and returns get(gpu_) unless `read` is unsupported.
  template <class Get>
  core::Result<std::invoke_result_t<Get&, const SimGpu&>> Read(const char* read, Get&& get)
      EXCLUDES(mu_) {
    core::MutexLock lock(&mu_);
    HEADROOM_RETURN_IF_ERROR(Sync(read));
    return get(gpu_);
  }
};

// N simulated GPUs of one type, indices 0..count-1, all running the options' script.
std::vector<std::unique_ptr<Device>> CreateSimDevices(const model::GpuSpec& spec, int count,
                                                      core::Clock* clock,
                                                      const SimOptions& options);

}  // namespace headroom::gpu::sim

#endif  // HEADROOM_GPU_SIM_SIM_DEVICE_H_
