// A fake libnvidia-ml.so.1 for tests and development: NVML's C entry points served by headroom's
// simulated GPUs (on the real clock), with NVML's units and return codes. It is a test double,
// never installed as NVIDIA's library. Configured by environment variables, read at nvmlInit:
//   HEADROOM_FAKE_NVML_GPU=a100-80gb-sxm     catalog type of every GPU
//   HEADROOM_FAKE_NVML_COUNT=2               number of GPUs
//   HEADROOM_FAKE_NVML_LOAD=idle             load script (see gpu/sim/load_script.h)
//   HEADROOM_FAKE_NVML_NOT_ROOT=1            setters return NO_PERMISSION
//   HEADROOM_FAKE_NVML_DRIVER_NOT_LOADED=1   nvmlInit returns DRIVER_NOT_LOADED
//   HEADROOM_FAKE_NVML_LOST_AFTER=2s         every device call returns GPU_IS_LOST after this
//   HEADROOM_FAKE_NVML_CLOCK=manual          time moves only through the exported test hook
//   HEADROOM_FAKE_NVML_SETTINGS_LOG=FILE     append each successful clock or power-limit change
//                                            ("gpu 1 lock 210 1275", "gpu 1 reset-clocks",
//                                            "gpu 1 power-limit-mw 300000"), so that a test can
//                                            see what a process did to the GPUs after it exited
//                                            headroomFakeNvmlAdvanceNs(ns), so tests never sleep
// MIG (GPU types with a MIG catalog entry; state kept by SimDevice, checked with the catalog's
// placement rules; none of it in the legacy build):
//   HEADROOM_FAKE_NVML_MIG=1                 MIG mode enabled (default: disabled)
//   HEADROOM_FAKE_NVML_MIG_LAYOUT=3g.40gb@0,2g.20gb@4
//                                            instances every GPU starts with (needs MIG=1)
//   HEADROOM_FAKE_NVML_MIG_STATE=FILE        MIG state read at nvmlInit and rewritten after each
//                                            change, so a later process sees it; when FILE
//                                            exists it wins over the two variables above
//   HEADROOM_FAKE_NVML_MIG_FAIL_CREATE=N     the Nth GPU- or compute-instance create call of the
//                                            process fails with INSUFFICIENT_RESOURCES
//   HEADROOM_FAKE_NVML_PROCESSES=4242:1,77   pretend compute processes on every GPU: pid, and
//                                            the GPU instance it runs in (none: the whole GPU);
//                                            destroying what they use returns IN_USE
//   HEADROOM_FAKE_NVML_MIG_PERTURB=9:sms=61,0:memory_mib=71424,19:absent,14:starts=0/2
//                                            GPU-instance profiles (by ID) as the driver reports
//                                            them differ from the catalog: sms, memory_mib,
//                                            slices, instances, copy, decoders, encoders, jpeg,
//                                            ofa, starts ('/'-separated), or absent (not listed)
//   HEADROOM_FAKE_NVML_MIG_PROFILES_NEED_MIG=1
//                                            profile info and possible placements answer
//                                            NOT_SUPPORTED while MIG mode is off; by default
//                                            they answer with MIG mode off too, as R580 does
//   HEADROOM_FAKE_NVML_MIG_NEEDS_RESET=1    nvmlDeviceSetMigMode reports RESET_REQUIRED and
//                                            changes nothing (a real GPU would hold the mode
//                                            as pending until a reset)
// Power smoothing (none of it in the legacy build):
//   HEADROOM_FAKE_NVML_POWER_SMOOTHING=1     every GPU has it, as Blackwell does (the simulator's
//                                            presets, off at start); default: NOT_SUPPORTED
// Overlapping or excess placements return INSUFFICIENT_RESOURCES, and with
// HEADROOM_FAKE_NVML_NOT_ROOT creating, destroying or setting MIG mode returns NO_PERMISSION.
// The MIG entry points are in fake_nvml_mig.cc, the state they share in fake_state.h.
// Built twice: the full library, and with HEADROOM_FAKE_NVML_LEGACY an 11.x-era one that exports
// only unversioned init/count/handle names, no energy counter, no field values, and only the old
// throttle-reasons name (to exercise symbol fallbacks and missing capabilities).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "catalog/hardware_catalog.h"
#include "catalog/mig_catalog.h"
#include "core/parse.h"
#include "fake_mig_state.h"
#include "fake_state.h"
#include "gpu/nvml/nvml_types.h"
#include "gpu/sim/sim_device.h"

namespace headroom::fake_nvml {

using headroom::core::Code;

std::mutex g_mu;
FakeState* g_state = nullptr;

bool EnvFlag(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && std::strcmp(v, "0") != 0 && *v != '\0';
}

std::string EnvOr(const char* name, const char* fallback) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? v : fallback;
}

// Appends one settings change to HEADROOM_FAKE_NVML_SETTINGS_LOG, if set. REQUIRES: g_mu held.
void LogSetting(const SimDevice& device, const std::string& what) {
  const char* path = std::getenv("HEADROOM_FAKE_NVML_SETTINGS_LOG");
  if (path == nullptr || *path == '\0') return;
  std::ofstream(path, std::ios::app) << "gpu " << device.info().index << " " << what << "\n";
}

// MIG options of the fake GPUs from the environment; a GPU type without a MIG entry has none.
nvmlReturn_t ConfigureMig(const std::string& gpu_type, headroom::gpu::sim::SimOptions* options) {
  auto mig_catalog = headroom::catalog::MigCatalog::Embedded();
  if (!mig_catalog) return nvml::kErrorUnknown;
  if (auto mig = mig_catalog->Gpu(gpu_type); mig) options->mig = **mig;
  options->mig_enabled = EnvFlag("HEADROOM_FAKE_NVML_MIG");
  auto processes = headroom::fake_nvml::ParseProcesses(EnvOr("HEADROOM_FAKE_NVML_PROCESSES", ""));
  if (!processes) return nvml::kErrorInvalidArgument;
  options->processes = *processes;
  return nvml::kSuccess;
}

// The GPUs' MIG state at start: the state file's, else the initial layout; then saved.
nvmlReturn_t StartMig(const headroom::gpu::sim::SimOptions& options, FakeState* state) {
  const std::string fail_at = EnvOr("HEADROOM_FAKE_NVML_MIG_FAIL_CREATE", "0");
  auto nth = headroom::core::ParseInteger(fail_at);
  if (!nth || *nth < 0) return nvml::kErrorInvalidArgument;
  state->mig_fail_create = static_cast<int>(*nth);
  if (!options.mig.has_value()) return nvml::kSuccess;
  state->mig_spec = options.mig;
  state->mig_profiles_need_mig = EnvFlag("HEADROOM_FAKE_NVML_MIG_PROFILES_NEED_MIG");
  state->mig_mode_needs_reset = EnvFlag("HEADROOM_FAKE_NVML_MIG_NEEDS_RESET");
  // What the driver reports may differ from the catalog; the simulated GPU keeps the catalog.
  if (!headroom::fake_nvml::PerturbProfiles(EnvOr("HEADROOM_FAKE_NVML_MIG_PERTURB", ""),
                                            &*state->mig_spec)) {
    return nvml::kErrorInvalidArgument;
  }
  state->mig_state_path = EnvOr("HEADROOM_FAKE_NVML_MIG_STATE", "");
  if (!state->mig_state_path.empty()) {
    auto loaded = headroom::fake_nvml::LoadMigState(state->mig_state_path, state->devices);
    if (!loaded) return nvml::kErrorInvalidArgument;
    if (*loaded) return nvml::kSuccess;
  }
  // Restored rather than created, so that it works without root too.
  auto instances =
      headroom::fake_nvml::InstancesOf(*options.mig, EnvOr("HEADROOM_FAKE_NVML_MIG_LAYOUT", ""));
  const bool has_layout = !EnvOr("HEADROOM_FAKE_NVML_MIG_LAYOUT", "").empty();
  if (has_layout && !instances) return nvml::kErrorInvalidArgument;
  for (auto& device : state->devices) {
    if (!has_layout) break;
    if (!device->RestoreMig(options.mig_enabled, *instances)) return nvml::kErrorInvalidArgument;
  }
  if (!state->mig_state_path.empty() &&
      !headroom::fake_nvml::SaveMigState(state->mig_state_path, state->devices)) {
    return nvml::kErrorUnknown;
  }
  return nvml::kSuccess;
}

nvmlReturn_t CreateState() {
  auto catalog = headroom::catalog::HardwareCatalog::Embedded();
  if (!catalog) return nvml::kErrorUnknown;
  auto spec = catalog->Gpu(EnvOr("HEADROOM_FAKE_NVML_GPU", "a100-80gb-sxm"));
  auto count = headroom::core::ParseInteger(EnvOr("HEADROOM_FAKE_NVML_COUNT", "2"));
  auto script = headroom::gpu::sim::LoadScript::Parse(EnvOr("HEADROOM_FAKE_NVML_LOAD", "idle"));
  if (!spec || !count || *count < 1 || !script) return nvml::kErrorInvalidArgument;
  auto state = std::make_unique<FakeState>();
  if (EnvOr("HEADROOM_FAKE_NVML_CLOCK", "real") == "manual") state->clock = &state->manual_clock;
  headroom::gpu::sim::SimOptions options;
  options.script = *script;
  options.controls_denied = EnvFlag("HEADROOM_FAKE_NVML_NOT_ROOT");
  options.power_smoothing = EnvFlag("HEADROOM_FAKE_NVML_POWER_SMOOTHING");
  if (nvmlReturn_t rc = ConfigureMig((*spec)->name, &options); rc != nvml::kSuccess) return rc;
  for (int i = 0; i < *count; ++i) {
    state->devices.push_back(std::make_unique<SimDevice>(i, **spec, state->clock, options));
  }
  if (nvmlReturn_t rc = StartMig(options, state.get()); rc != nvml::kSuccess) return rc;
  if (const char* lost = std::getenv("HEADROOM_FAKE_NVML_LOST_AFTER")) {
    auto after = headroom::core::ParseDuration(lost);
    if (!after) return nvml::kErrorInvalidArgument;
    state->lost_after = *after;
  }
  state->classic_is_average = (*spec)->sensor.classic_power_is_average;
  state->start = state->clock->Now();
  g_state = state.release();
  return nvml::kSuccess;
}

nvmlReturn_t Init() {
  std::lock_guard lock(g_mu);
  if (EnvFlag("HEADROOM_FAKE_NVML_DRIVER_NOT_LOADED")) return nvml::kErrorDriverNotLoaded;
  if (g_state == nullptr) {
    if (nvmlReturn_t rc = CreateState(); rc != nvml::kSuccess) return rc;
  }
  ++g_state->init_count;
  return nvml::kSuccess;
}

// The device behind a handle, or the NVML error that a call on it returns.
nvmlReturn_t Lookup(nvmlDevice_t handle, SimDevice** out) {
  if (g_state == nullptr) return nvml::kErrorUninitialized;
  for (auto& d : g_state->devices) {
    if (reinterpret_cast<nvmlDevice_t>(d.get()) == handle) {
      if (g_state->lost_after && g_state->clock->Now() - g_state->start >= *g_state->lost_after) {
        return nvml::kErrorGpuIsLost;
      }
      *out = d.get();
      return nvml::kSuccess;
    }
  }
  return nvml::kErrorInvalidArgument;
}

nvmlReturn_t ReturnFor(const headroom::core::Error& e) {
  switch (e.code()) {
    case Code::kPermissionDenied:
      return nvml::kErrorNoPermission;
    case Code::kUnimplemented:
      return nvml::kErrorNotSupported;
    case Code::kOutOfRange:
    case Code::kInvalidArgument:
      return nvml::kErrorInvalidArgument;
    case Code::kResourceExhausted:
      return nvml::kErrorInsufficientResources;
    case Code::kFailedPrecondition:
      return nvml::kErrorInUse;
    case Code::kNotFound:
      return nvml::kErrorNotFound;
    default:
      return nvml::kErrorUnknown;
  }
}

// Both names of the clock-event reasons call (12.x's and the deprecated one) answer the same.
nvmlReturn_t ClockEventReasons(nvmlDevice_t handle, unsigned long long* reasons) {
  std::lock_guard lock(g_mu);
  return Get(
      handle, reasons, [](SimDevice& d) { return d.ThrottleReasons(); },
      [](std::uint64_t r) { return r; });
}

unsigned int Milli(double x) { return static_cast<unsigned int>(x * 1000.0 + 0.5); }

nvmlReturn_t CopyString(const std::string& s, char* out, unsigned int length) {
  if (out == nullptr || length <= s.size()) return nvml::kErrorInsufficientSize;
  std::memcpy(out, s.c_str(), s.size() + 1);
  return nvml::kSuccess;
}

// Entry points: C names, so their namespace does not matter to the linker.

#ifdef HEADROOM_FAKE_NVML_LEGACY
FAKE_EXPORT nvmlReturn_t nvmlInit() { return Init(); }
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCount(unsigned int* count);
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned int index, nvmlDevice_t* device);
#define HEADROOM_COUNT_NAME nvmlDeviceGetCount
#define HEADROOM_HANDLE_NAME nvmlDeviceGetHandleByIndex
#else
FAKE_EXPORT nvmlReturn_t nvmlInit_v2() { return Init(); }
#define HEADROOM_COUNT_NAME nvmlDeviceGetCount_v2
#define HEADROOM_HANDLE_NAME nvmlDeviceGetHandleByIndex_v2
#endif

// Test hook (not an NVML function): advances the manual clock.
FAKE_EXPORT void headroomFakeNvmlAdvanceNs(long long ns) {
  std::lock_guard lock(g_mu);
  if (g_state != nullptr) g_state->manual_clock.Advance(headroom::core::Duration(ns));
}

FAKE_EXPORT nvmlReturn_t nvmlShutdown() {
  std::lock_guard lock(g_mu);
  if (g_state == nullptr) return nvml::kErrorUninitialized;
  if (--g_state->init_count == 0) {
    delete g_state;
    g_state = nullptr;
  }
  return nvml::kSuccess;
}

FAKE_EXPORT const char* nvmlErrorString(nvmlReturn_t rc) {
  switch (rc) {
    case nvml::kSuccess:
      return "Success";
    case nvml::kErrorUninitialized:
      return "Uninitialized";
    case nvml::kErrorInvalidArgument:
      return "Invalid Argument";
    case nvml::kErrorNotSupported:
      return "Not Supported";
    case nvml::kErrorNoPermission:
      return "Insufficient Permissions";
    case nvml::kErrorNotFound:
      return "Not Found";
    case nvml::kErrorInsufficientSize:
      return "Insufficient Size";
    case nvml::kErrorDriverNotLoaded:
      return "Driver Not Loaded";
    case nvml::kErrorGpuIsLost:
      return "GPU is lost";
    case nvml::kErrorInUse:
      return "In use by another client";
    case nvml::kErrorInsufficientResources:
      return "Insufficient Resources";
    default:
      return "Unknown Error";
  }
}

FAKE_EXPORT nvmlReturn_t HEADROOM_COUNT_NAME(unsigned int* count) {
  std::lock_guard lock(g_mu);
  if (g_state == nullptr) return nvml::kErrorUninitialized;
  if (count == nullptr) return nvml::kErrorInvalidArgument;
  *count = static_cast<unsigned int>(g_state->devices.size());
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t HEADROOM_HANDLE_NAME(unsigned int index, nvmlDevice_t* device) {
  std::lock_guard lock(g_mu);
  if (g_state == nullptr) return nvml::kErrorUninitialized;
  if (device == nullptr || index >= g_state->devices.size()) return nvml::kErrorInvalidArgument;
  *device = reinterpret_cast<nvmlDevice_t>(g_state->devices[index].get());
  return nvml::kSuccess;
}

// Each GPU has one MIG device, "MIG-" + the GPU's UUID without "GPU-". Its handle is the GPU's
// address with the low bit set: device queries on it fail as on real MIG devices (power is per
// physical GPU), and nvmlDeviceGetDeviceHandleFromMigDeviceHandle clears the bit.
constexpr std::uintptr_t kMigTag = 1;

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid, nvmlDevice_t* device) {
  std::lock_guard lock(g_mu);
  if (g_state == nullptr) return nvml::kErrorUninitialized;
  if (uuid == nullptr || device == nullptr) return nvml::kErrorInvalidArgument;
  for (auto& d : g_state->devices) {
    const std::string& gpu_uuid = d->info().uuid;
    if (gpu_uuid == uuid) {
      *device = reinterpret_cast<nvmlDevice_t>(d.get());
      return nvml::kSuccess;
    }
    if ("MIG-" + gpu_uuid.substr(4) == uuid) {
      *device = reinterpret_cast<nvmlDevice_t>(reinterpret_cast<std::uintptr_t>(d.get()) | kMigTag);
      return nvml::kSuccess;
    }
    // The MIG devices of the GPU's compute instances.
    auto instances = d->MigInstances();
    for (const auto& gi : instances ? *instances : std::vector<headroom::gpu::MigGpuInstance>{}) {
      for (const auto& ci : gi.compute_instances) {
        if (ci.uuid != uuid) continue;
        *device = reinterpret_cast<nvmlDevice_t>(
            MigHandleFor(MigHandle::Kind::kMigDevice, d.get(), gi.id, ci.id));
        return nvml::kSuccess;
      }
    }
  }
  return nvml::kErrorNotFound;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetDeviceHandleFromMigDeviceHandle(nvmlDevice_t mig,
                                                                      nvmlDevice_t* device) {
  if (device == nullptr) return nvml::kErrorInvalidArgument;
  {
    std::lock_guard lock(g_mu);
    if (MigHandle* h = ResolveMig(mig, MigHandle::Kind::kMigDevice)) {
      *device = reinterpret_cast<nvmlDevice_t>(h->device);
      return nvml::kSuccess;
    }
  }
  const auto bits = reinterpret_cast<std::uintptr_t>(mig);
  if ((bits & kMigTag) == 0) return nvml::kErrorInvalidArgument;
  *device = reinterpret_cast<nvmlDevice_t>(bits & ~kMigTag);
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetIndex(nvmlDevice_t handle, unsigned int* index) {
  std::lock_guard lock(g_mu);
  return Get(
      handle, index, [](SimDevice& d) { return headroom::core::Result<int>(d.info().index); },
      [](int i) { return i; });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t handle, char* name, unsigned int length) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  return CopyString(device->info().name, name, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t handle, char* uuid, unsigned int length) {
  std::lock_guard lock(g_mu);
  if (MigHandle* h = ResolveMig(handle, MigHandle::Kind::kMigDevice)) {
    auto ci = FindComputeInstance(*h->device, h->gpu_instance, h->compute_instance);
    return ci ? CopyString(ci->uuid, uuid, length) : nvml::kErrorNotFound;
  }
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  return CopyString(device->info().uuid, uuid, length);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t handle, unsigned int* mw) {
  std::lock_guard lock(g_mu);
  // Hopper's classic reading is the 1 s average; GA100's is instantaneous (nvml.md §5.1).
  const bool average = g_state != nullptr && g_state->classic_is_average;
  return Get(
      handle, mw, [average](SimDevice& d) { return average ? d.PowerAverage() : d.PowerInstant(); },
      [](headroom::core::Watts w) { return Milli(w.value()); });
}

#ifndef HEADROOM_FAKE_NVML_LEGACY
FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t handle,
                                                             unsigned long long* mj) {
  std::lock_guard lock(g_mu);
  return Get(
      handle, mj, [](SimDevice& d) { return d.EnergyCounter(); },
      [](headroom::core::Joules j) {
        return static_cast<unsigned long long>(j.value() * 1000.0 + 0.5);
      });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t handle, int count,
                                                  nvml::nvmlFieldValue_t* values) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  if (values == nullptr || count < 0) return nvml::kErrorInvalidArgument;
  const auto now_us = std::chrono::duration_cast<std::chrono::microseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  for (int i = 0; i < count; ++i) {
    nvml::nvmlFieldValue_t& v = values[i];
    v.timestamp = now_us;
    v.latencyUsec = 0;
    if (IsPowerSmoothingField(v.fieldId)) {
      v.nvmlReturn = PowerSmoothingField(*device, v);
      continue;
    }
    auto power = v.fieldId == nvml::kFieldPowerInstant ? device->PowerInstant()
                 : v.fieldId == nvml::kFieldPowerAverage
                     ? device->PowerAverage()
                     : headroom::core::Result<headroom::core::Watts>(
                           headroom::core::Fail(headroom::core::Error::Unimplemented("")));
    if (power) {
      v.valueType = nvml::kValueTypeUnsignedInt;
      v.value.uiVal = Milli(power->value());
      v.nvmlReturn = nvml::kSuccess;
    } else {
      v.nvmlReturn = nvml::kErrorNotSupported;
    }
  }
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t handle,
                                                                unsigned long long* reasons) {
  return ClockEventReasons(handle, reasons);
}
#endif

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t handle, int type,
                                              unsigned long long last_seen_us, int* value_type,
                                              unsigned int* count, nvml::nvmlSample_t* samples) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  if (count == nullptr || value_type == nullptr) return nvml::kErrorInvalidArgument;
  if (type != nvml::kTotalPowerSamples) return nvml::kErrorNotSupported;
  auto found = device->PowerSamples(last_seen_us);
  if (!found) return ReturnFor(found.error());
  if (found->empty()) return nvml::kErrorNotFound;
  *value_type = nvml::kValueTypeUnsignedInt;
  if (samples == nullptr) {
    *count = static_cast<unsigned int>(found->size());
    return nvml::kSuccess;
  }
  const size_t n = std::min<size_t>(*count, found->size());
  for (size_t i = 0; i < n; ++i) {
    samples[i].timeStamp = (*found)[i].timestamp_us;
    samples[i].sampleValue.uiVal = Milli((*found)[i].power.value());
  }
  *count = static_cast<unsigned int>(n);
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t handle,
                                                                   unsigned long long* reasons) {
  return ClockEventReasons(handle, reasons);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t handle, unsigned int* mw) {
  std::lock_guard lock(g_mu);
  return Get(
      handle, mw, [](SimDevice& d) { return d.PowerLimits(); },
      [](const headroom::gpu::PowerLimitState& l) { return Milli(l.requested.value()); });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t handle, unsigned int* mw) {
  std::lock_guard lock(g_mu);
  return Get(
      handle, mw, [](SimDevice& d) { return d.PowerLimits(); },
      [](const headroom::gpu::PowerLimitState& l) { return Milli(l.enforced.value()); });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t handle,
                                                                  unsigned int* mw) {
  std::lock_guard lock(g_mu);
  return Get(
      handle, mw, [](SimDevice& d) { return d.PowerLimits(); },
      [](const headroom::gpu::PowerLimitState& l) { return Milli(l.default_limit.value()); });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t handle,
                                                                      unsigned int* min_mw,
                                                                      unsigned int* max_mw) {
  std::lock_guard lock(g_mu);
  if (max_mw == nullptr) return nvml::kErrorInvalidArgument;
  const nvmlReturn_t rc = Get(
      handle, min_mw, [](SimDevice& d) { return d.PowerLimits(); },
      [](const headroom::gpu::PowerLimitState& l) { return Milli(l.min.value()); });
  if (rc != nvml::kSuccess) return rc;
  return Get(
      handle, max_mw, [](SimDevice& d) { return d.PowerLimits(); },
      [](const headroom::gpu::PowerLimitState& l) { return Milli(l.max.value()); });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t handle, unsigned int mw) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  auto st = device->SetPowerLimit(headroom::core::Watts(mw / 1000.0));
  if (st) LogSetting(*device, "power-limit-mw " + std::to_string(mw));
  return st ? nvml::kSuccess : ReturnFor(st.error());
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t handle, int type, unsigned int* mhz) {
  std::lock_guard lock(g_mu);
  return Get(
      handle, mhz,
      [type](SimDevice& d) { return type == nvml::kClockMem ? d.MemoryClock() : d.SmClock(); },
      [](headroom::core::Megahertz f) { return static_cast<unsigned int>(f.value()); });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t handle, int type,
                                                   unsigned int* mhz) {
  std::lock_guard lock(g_mu);
  return Get(
      handle, mhz,
      [type](SimDevice& d) {
        return headroom::core::Result<headroom::core::Megahertz>(
            type == nvml::kClockMem ? *d.info().memory_clock_max : *d.info().sm_clock_max);
      },
      [](headroom::core::Megahertz f) { return static_cast<unsigned int>(f.value()); });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSupportedMemoryClocks(nvmlDevice_t handle,
                                                            unsigned int* count,
                                                            unsigned int* clocks) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  if (count == nullptr) return nvml::kErrorInvalidArgument;
  if (*count < 1 || clocks == nullptr) {
    *count = 1;
    return nvml::kErrorInsufficientSize;
  }
  *count = 1;
  clocks[0] = static_cast<unsigned int>(device->info().memory_clock_max->value());
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetSupportedGraphicsClocks(nvmlDevice_t handle,
                                                              unsigned int /*memory_mhz*/,
                                                              unsigned int* count,
                                                              unsigned int* clocks) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  if (count == nullptr) return nvml::kErrorInvalidArgument;
  auto supported = device->SupportedSmClocks();
  if (!supported) return ReturnFor(supported.error());
  if (*count < supported->size() || clocks == nullptr) {
    *count = static_cast<unsigned int>(supported->size());
    return nvml::kErrorInsufficientSize;
  }
  *count = static_cast<unsigned int>(supported->size());
  for (size_t i = 0; i < supported->size(); ++i) {
    clocks[i] = static_cast<unsigned int>((*supported)[i].value());
  }
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceSetGpuLockedClocks(nvmlDevice_t handle, unsigned int min_mhz,
                                                      unsigned int max_mhz) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  auto st =
      device->LockSmClocks(headroom::core::Megahertz(min_mhz), headroom::core::Megahertz(max_mhz));
  if (st) LogSetting(*device, "lock " + std::to_string(min_mhz) + " " + std::to_string(max_mhz));
  return st ? nvml::kSuccess : ReturnFor(st.error());
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceResetGpuLockedClocks(nvmlDevice_t handle) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  auto st = device->ResetSmClocks();
  if (st) LogSetting(*device, "reset-clocks");
  return st ? nvml::kSuccess : ReturnFor(st.error());
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t handle,
                                                       nvml::nvmlUtilization_t* out) {
  std::lock_guard lock(g_mu);
  return Get(
      handle, out, [](SimDevice& d) { return d.Utilization(); },
      [](const headroom::gpu::UtilizationRates& u) {
        return nvml::nvmlUtilization_t{static_cast<unsigned int>(u.gpu_percent + 0.5),
                                       static_cast<unsigned int>(u.memory_percent + 0.5)};
      });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t handle, int /*sensor*/,
                                                  unsigned int* celsius) {
  std::lock_guard lock(g_mu);
  return Get(
      handle, celsius, [](SimDevice& d) { return d.Temperature(); },
      [](headroom::core::Celsius c) { return static_cast<unsigned int>(c.value() + 0.5); });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t handle, nvml::nvmlMemory_t* out) {
  std::lock_guard lock(g_mu);
  return Get(
      handle, out, [](SimDevice& d) { return d.Memory(); },
      [](const headroom::gpu::MemoryUsage& m) {
        return nvml::nvmlMemory_t{m.total_bytes, m.total_bytes - m.used_bytes, m.used_bytes};
      });
}

}  // namespace headroom::fake_nvml
