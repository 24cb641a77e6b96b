// Internal to the fake libnvidia-ml.so.1 (fake_nvml.cc, fake_nvml_mig.cc): the state its entry
// points share, behind one mutex, and the helpers that translate handles and errors. Test-only.
// Every function here REQUIRES g_mu held.
#ifndef HEADROOM_TESTS_FAKE_NVML_FAKE_STATE_H_
#define HEADROOM_TESTS_FAKE_NVML_FAKE_STATE_H_

#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/time.h"
#include "gpu/nvml/nvml_types.h"
#include "gpu/sim/sim_device.h"
#include "mig/profile.h"

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace headroom::fake_nvml {

using gpu::sim::SimDevice;
namespace nvml = gpu::nvml;
using nvml::nvmlDevice_t;
using nvml::nvmlReturn_t;

// What a GPU-instance, compute-instance or MIG-device handle stands for. Handles are addresses of
// these entries, which never move (a deque) and are reused for the same instance.
struct MigHandle {
  enum class Kind { kGpuInstance, kComputeInstance, kMigDevice };
  Kind kind = Kind::kGpuInstance;
  SimDevice* device = nullptr;
  int gpu_instance = 0;
  int compute_instance = 0;
};

struct FakeState {
  core::SystemClock system_clock;
  core::FakeClock manual_clock;
  core::Clock* clock = &system_clock;
  std::vector<std::unique_ptr<SimDevice>> devices;
  std::optional<core::Duration> lost_after;
  core::TimePoint start;
  bool classic_is_average = false;
  int init_count = 0;
  std::deque<MigHandle> mig_handles;
  std::string mig_state_path;
  int mig_creates = 0;                      // create calls so far
  int mig_fail_create = 0;                  // 0: none fails
  std::optional<mig::GpuMigSpec> mig_spec;  // the profiles as the driver reports them
  bool mig_profiles_need_mig = false;       // profile queries NOT_SUPPORTED with MIG off
  bool mig_mode_needs_reset = false;        // nvmlDeviceSetMigMode changes nothing until a reset
};

extern std::mutex g_mu;
extern FakeState* g_state;  // between the first nvmlInit and the last nvmlShutdown

// The device behind a handle, or the NVML error that a call on it returns.
nvmlReturn_t Lookup(nvmlDevice_t handle, SimDevice** out);
// The NVML return code for a SimDevice error.
nvmlReturn_t ReturnFor(const core::Error& e);
nvmlReturn_t CopyString(const std::string& s, char* out, unsigned int length);
// Appends one settings change to HEADROOM_FAKE_NVML_SETTINGS_LOG, if set.
void LogSetting(const SimDevice& device, const std::string& what);

// Power smoothing (fake_nvml_power_smoothing.cc): whether a field id is one of
// NVML_FI_PWR_SMOOTHING_*, and that field's value for `device`, its status returned.
bool IsPowerSmoothingField(unsigned int field_id);
nvmlReturn_t PowerSmoothingField(SimDevice& device, nvml::nvmlFieldValue_t& v);

// The entry behind a MIG handle of `kind`, or nullptr.
MigHandle* ResolveMig(const void* handle, MigHandle::Kind kind);
// The handle standing for (kind, device, gi, ci), made on first use.
MigHandle* MigHandleFor(MigHandle::Kind kind, SimDevice* device, int gi, int ci = 0);
// The compute instance (gi, ci) of `device` as the device reports it, or nullopt.
std::optional<gpu::MigComputeInstance> FindComputeInstance(SimDevice& device, int gi, int ci);

// Runs `fn(device)` (which returns a Result) and stores `convert(value)` in *out.
template <class Out, class Fn, class Convert>
nvmlReturn_t Get(nvmlDevice_t handle, Out* out, Fn&& fn, Convert&& convert) {
  if (out == nullptr) return nvml::kErrorInvalidArgument;
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  auto value = fn(*device);
  if (!value) return ReturnFor(value.error());
  *out = static_cast<Out>(convert(*value));
  return nvml::kSuccess;
}

}  // namespace headroom::fake_nvml

#endif  // HEADROOM_TESTS_FAKE_NVML_FAKE_STATE_H_
