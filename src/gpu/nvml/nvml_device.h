// The NVML backend: NvmlSession (one loaded and initialized NVML per process) and NvmlDevice, a
// Device over one GPU. Converts NVML's mW, mJ and MHz into core units and NVML errors into typed
// errors. Capabilities are probed once at open: a read the GPU or driver lacks is kUnimplemented.
// NvmlDevice is thread-safe (NVML is; our own state is locked).
#ifndef HEADROOM_GPU_NVML_NVML_DEVICE_H_
#define HEADROOM_GPU_NVML_NVML_DEVICE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/thread_annotations.h"
#include "gpu/device.h"
#include "gpu/nvml/nvml_api.h"
#include "gpu/nvml/nvml_library.h"

namespace headroom::gpu::nvml {

class NvmlSession {
 public:
  // Loads the library (NvmlLibrary::Open), binds the API and calls nvmlInit. Errors are one line,
  // e.g. kUnavailable "NVML could not start: Driver Not Loaded ... use --backend sim".
  [[nodiscard]] static core::Result<std::shared_ptr<NvmlSession>> Open();
  ~NvmlSession();  // nvmlShutdown, once per successful init
  NvmlSession(const NvmlSession&) = delete;
  NvmlSession& operator=(const NvmlSession&) = delete;

  const NvmlApi& api() const { return api_; }
  const std::string& library_path() const { return library_->path(); }

 private:
  NvmlSession(std::unique_ptr<NvmlLibrary> library, NvmlApi api)
      : library_(std::move(library)), api_(api) {}
  std::unique_ptr<NvmlLibrary> library_;
  NvmlApi api_;
};

struct NvmlOpenOptions {
  // GPUs to open, each an index, a GPU UUID ("GPU-...") or a MIG UUID ("MIG-...", mapped to its
  // parent GPU, since power is per physical GPU). Empty: CUDA_VISIBLE_DEVICES when set, else all.
  std::vector<std::string> selectors = {};
  // Maps NVML's device name to a catalog type, when known.
  std::function<std::optional<std::string>(std::string_view)> catalog_type_for_name = {};
};

[[nodiscard]] core::Result<std::vector<std::unique_ptr<Device>>> OpenNvmlDevices(
    const NvmlOpenOptions& options);

class NvmlDevice final : public Device {
 public:
  NvmlDevice(std::shared_ptr<NvmlSession> session, nvmlDevice_t handle, DeviceInfo info);

  const DeviceInfo& info() const override { return info_; }
  core::Result<core::Watts> PowerInstant() override;
  core::Result<core::Watts> PowerAverage() override;
  core::Result<core::Joules> EnergyCounter() override;
  core::Result<std::vector<PowerSample>> PowerSamples(std::uint64_t after_us) override;
  core::Result<core::Megahertz> SmClock() override;
  core::Result<core::Megahertz> MemoryClock() override;
  core::Result<std::vector<core::Megahertz>> SupportedSmClocks() override;
  core::Result<UtilizationRates> Utilization() override;
  core::Result<core::Celsius> Temperature() override;
  core::Result<MemoryUsage> Memory() override;
  core::Result<PowerLimitState> PowerLimits() override;
  core::Result<std::uint64_t> ThrottleReasons() override;
  core::Result<std::optional<ClockLock>> SmClockLock() override EXCLUDES(mu_);
  core::Status SetPowerLimit(core::Watts limit) override;
  core::Status ResetPowerLimit() override;
  core::Status LockSmClocks(core::Megahertz min, core::Megahertz max) override EXCLUDES(mu_);
  core::Status ResetSmClocks() override EXCLUDES(mu_);

  // MIG, in nvml_mig.cc. Profiles are probed on each call (some drivers list them only while MIG
  // mode is on; R580 lists them either way).
  core::Result<MigModeState> MigMode() override;
  core::Result<MigModeState> SetMigMode(bool enabled) override;
  core::Result<std::vector<MigGpuInstance>> MigInstances() override;
  core::Result<std::vector<MigProfileInfo>> MigProfiles() override;
  core::Result<int> CreateGpuInstance(int profile_id, int start) override;
  core::Result<int> CreateComputeInstance(int gpu_instance_id, int compute_slices) override;
  core::Status DestroyComputeInstance(int gpu_instance_id, int compute_instance_id) override;
  core::Status DestroyGpuInstance(int gpu_instance_id) override;
  core::Result<std::vector<GpuProcess>> RunningProcesses() override;

  // Power smoothing, in nvml_power_smoothing.cc: read through the NVML_FI_PWR_SMOOTHING_*
  // fields on each call, set through the three nvmlDevicePowerSmoothing* calls.
  core::Result<PowerSmoothingState> PowerSmoothing() override;
  core::Status SetPowerSmoothingEnabled(bool enabled) override;
  core::Status ActivatePowerSmoothingProfile(int profile) override;
  core::Status UpdatePowerSmoothingProfile(int profile,
                                           const PowerSmoothingUpdate& update) override;

 private:
  struct GiEntry;
  struct CiEntry;
  // OK, or the typed error for `rc` naming this GPU and `what`.
  core::Status Check(nvmlReturn_t rc, const char* what) const;
  // kUnimplemented when the library lacks the entry point `fn`.
  core::Status Require(const void* fn, const char* what) const;
  core::Result<unsigned int> PowerField(unsigned int field_id, const char* what) const;
  core::Status Check(nvmlReturn_t rc, const std::string& what) const {
    return Check(rc, what.c_str());
  }
  // MIG helpers (nvml_mig.cc).
  // The profiles the driver answers, by NVML profile value, without their placements.
  core::Result<std::vector<MigProfileInfo>> GpuInstanceProfiles() const;
  // The driver's placements for profile ID `profile_id`, ascending; `what` names the caller.
  core::Result<std::vector<MigPlacement>> PossiblePlacements(int profile_id,
                                                             const std::string& what) const;
  core::Result<std::vector<GiEntry>> GpuInstances() const;
  core::Result<GiEntry> FindGpuInstance(int gpu_instance_id, const char* what) const;
  core::Result<std::vector<CiEntry>> ComputeInstances(nvmlGpuInstance_t gi) const;
  void FillMigDeviceUuids(std::vector<MigGpuInstance>* instances) const;
  // Reads `fields` in one call; each entry's own status is checked, naming `what`.
  core::Status ReadFields(std::vector<nvmlFieldValue_t>* fields, const char* what) const;
  core::Result<std::vector<PowerSmoothingProfile>> PowerSmoothingProfiles(unsigned int count) const;

  std::shared_ptr<NvmlSession> session_;
  const NvmlApi& api_;
  nvmlDevice_t handle_;
  DeviceInfo info_;
  bool has_instant_field_ = false;
  bool has_average_field_ = false;

  core::Mutex mu_;
  // NVML cannot read back a clock lock; we remember the one we set.
  std::optional<ClockLock> lock_ GUARDED_BY(mu_);
};

}  // namespace headroom::gpu::nvml

#endif  // HEADROOM_GPU_NVML_NVML_DEVICE_H_
