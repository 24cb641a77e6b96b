// The fake NVML's MIG entry points (see fake_nvml.cc for the variables that configure them). The
// SimDevice holds the MIG state; these calls translate handles, profiles and errors, and keep the
// state file current. The legacy (11.x-era) build exports none of them. Test-only.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <iterator>
#include <vector>

#include "fake_mig_state.h"
#include "fake_state.h"

namespace headroom::fake_nvml {

// The entry behind a MIG handle of `kind`, or nullptr. REQUIRES: g_mu held.
MigHandle* ResolveMig(const void* handle, MigHandle::Kind kind) {
  if (g_state == nullptr) return nullptr;
  for (MigHandle& h : g_state->mig_handles) {
    if (&h == handle && h.kind == kind) return &h;
  }
  return nullptr;
}

// The handle standing for (kind, device, gi, ci), made on first use. REQUIRES: g_mu held.
MigHandle* MigHandleFor(MigHandle::Kind kind, SimDevice* device, int gi, int ci) {
  for (MigHandle& h : g_state->mig_handles) {
    if (h.kind == kind && h.device == device && h.gpu_instance == gi && h.compute_instance == ci) {
      return &h;
    }
  }
  g_state->mig_handles.push_back({kind, device, gi, ci});
  return &g_state->mig_handles.back();
}

// The compute instance (gi, ci) of `device` as the device reports it, or nullopt.
std::optional<headroom::gpu::MigComputeInstance> FindComputeInstance(SimDevice& device, int gi,
                                                                     int ci) {
  auto instances = device.MigInstances();
  if (!instances) return std::nullopt;
  for (const auto& g : *instances) {
    if (g.id != gi) continue;
    for (const auto& c : g.compute_instances) {
      if (c.id == ci) return c;
    }
  }
  return std::nullopt;
}

#ifndef HEADROOM_FAKE_NVML_LEGACY
namespace {

using headroom::gpu::MigGpuInstance;
using headroom::mig::GiProfile;
using Kind = MigHandle::Kind;

constexpr nvmlReturn_t kErrorArgumentVersionMismatch = 25;
constexpr unsigned int kNoInstance = 0xFFFFFFFFU;

// Rewrites the state file after a change. REQUIRES: g_mu held.
void PersistMig() {
  if (g_state->mig_state_path.empty()) return;
  (void)headroom::fake_nvml::SaveMigState(g_state->mig_state_path, g_state->devices);
}

// Counts a create call; true for the one HEADROOM_FAKE_NVML_MIG_FAIL_CREATE picks.
bool InjectedCreateFailure() {
  ++g_state->mig_creates;
  return g_state->mig_fail_create > 0 && g_state->mig_creates == g_state->mig_fail_create;
}

const GiProfile* ProfileWhere(const std::function<bool(const GiProfile&)>& match) {
  if (!g_state->mig_spec) return nullptr;
  for (const GiProfile& p : g_state->mig_spec->profiles) {
    if (match(p)) return &p;
  }
  return nullptr;
}

// The device's GPU instances, or the NVML error for reading them (NOT_SUPPORTED with MIG off).
nvmlReturn_t Instances(SimDevice& device, std::vector<MigGpuInstance>* out) {
  auto instances = device.MigInstances();
  if (!instances) return ReturnFor(instances.error());
  *out = std::move(*instances);
  return nvml::kSuccess;
}

// The GPU instance behind a handle, with its device.
nvmlReturn_t LookupGi(nvml::nvmlGpuInstance_t handle, MigHandle** h, MigGpuInstance* gi) {
  if (g_state == nullptr) return nvml::kErrorUninitialized;
  *h = ResolveMig(handle, Kind::kGpuInstance);
  if (*h == nullptr) return nvml::kErrorInvalidArgument;
  std::vector<MigGpuInstance> instances;
  if (nvmlReturn_t rc = Instances(*(*h)->device, &instances); rc != nvml::kSuccess) return rc;
  for (const MigGpuInstance& i : instances) {
    if (i.id == (*h)->gpu_instance) {
      *gi = i;
      return nvml::kSuccess;
    }
  }
  return nvml::kErrorNotFound;
}

// Whether the device's profiles can be queried now: as R580 does, also with MIG mode off, unless
// HEADROOM_FAKE_NVML_MIG_PROFILES_NEED_MIG; a GPU without MIG has none.
nvmlReturn_t ProfilesListed(SimDevice& device) {
  auto mode = device.MigMode();
  if (!mode) return ReturnFor(mode.error());
  if (g_state->mig_profiles_need_mig && !mode->current) return nvml::kErrorNotSupported;
  return nvml::kSuccess;
}

// Compute slices of a compute-instance profile (its id is its NVML enum value), or 0.
int CiSlices(unsigned int profile) {
  return profile < std::size(nvml::kComputeInstanceProfileSlices)
             ? nvml::kComputeInstanceProfileSlices[profile]
             : 0;
}

unsigned int CiProfileFor(int slices) {
  const auto* it = std::find(std::begin(nvml::kComputeInstanceProfileSlices),
                             std::end(nvml::kComputeInstanceProfileSlices), slices);
  return static_cast<unsigned int>(it - std::begin(nvml::kComputeInstanceProfileSlices));
}

template <class Info>
nvmlReturn_t GiProfileInfo(nvmlDevice_t handle, unsigned int profile, Info* info) {
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  if (info == nullptr) return nvml::kErrorInvalidArgument;
  if (nvmlReturn_t rc = ProfilesListed(*device); rc != nvml::kSuccess) return rc;
  const GiProfile* p = ProfileWhere(
      [profile](const GiProfile& q) { return q.nvml_value == static_cast<int>(profile); });
  if (p == nullptr) return nvml::kErrorNotSupported;
  info->id = static_cast<unsigned int>(p->id);
  info->isP2pSupported = 0;
  info->sliceCount = static_cast<unsigned int>(p->compute_slices);
  info->instanceCount = static_cast<unsigned int>(p->max_instances);
  info->multiprocessorCount = static_cast<unsigned int>(p->sm_count);
  info->copyEngineCount = static_cast<unsigned int>(p->engines.copy);
  info->decoderCount = static_cast<unsigned int>(p->engines.decoders);
  info->encoderCount = static_cast<unsigned int>(p->engines.encoders);
  info->jpegCount = static_cast<unsigned int>(p->engines.jpeg);
  info->ofaCount = static_cast<unsigned int>(p->engines.ofa);
  info->memorySizeMB = static_cast<unsigned long long>(p->memory_gib * 1024.0);
  return nvml::kSuccess;
}

template <class Info>
nvmlReturn_t CiProfileInfo(nvml::nvmlGpuInstance_t handle, unsigned int profile,
                           unsigned int engine_profile, Info* info) {
  MigHandle* h = nullptr;
  MigGpuInstance gi;
  if (nvmlReturn_t rc = LookupGi(handle, &h, &gi); rc != nvml::kSuccess) return rc;
  if (info == nullptr) return nvml::kErrorInvalidArgument;
  const GiProfile* p = ProfileWhere([&gi](const GiProfile& q) { return q.id == gi.profile_id; });
  const int slices = CiSlices(profile);
  if (p == nullptr || engine_profile != nvml::kComputeInstanceEngineProfileShared || slices == 0 ||
      slices > p->compute_slices || slices == 6 || slices == 8) {
    return nvml::kErrorNotSupported;
  }
  info->id = profile;
  info->sliceCount = static_cast<unsigned int>(slices);
  info->instanceCount = static_cast<unsigned int>(p->compute_slices / slices);
  info->multiprocessorCount = static_cast<unsigned int>(p->sm_count * slices / p->compute_slices);
  info->sharedCopyEngineCount = static_cast<unsigned int>(p->engines.copy);
  info->sharedDecoderCount = static_cast<unsigned int>(p->engines.decoders);
  info->sharedEncoderCount = static_cast<unsigned int>(p->engines.encoders);
  info->sharedJpegCount = static_cast<unsigned int>(p->engines.jpeg);
  info->sharedOfaCount = static_cast<unsigned int>(p->engines.ofa);
  return nvml::kSuccess;
}

// Fills `out` (capacity *count) with `handles`, or says how many are needed.
template <class Handle>
nvmlReturn_t ReturnHandles(const std::vector<Handle>& handles, Handle* out, unsigned int* count) {
  if (count == nullptr) return nvml::kErrorInvalidArgument;
  if (out == nullptr || *count < handles.size()) {
    *count = static_cast<unsigned int>(handles.size());
    return handles.empty() ? nvml::kSuccess : nvml::kErrorInsufficientSize;
  }
  std::copy(handles.begin(), handles.end(), out);
  *count = static_cast<unsigned int>(handles.size());
  return nvml::kSuccess;
}

}  // namespace

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t handle, unsigned int* current,
                                              unsigned int* pending) {
  std::lock_guard lock(g_mu);
  if (pending == nullptr) return nvml::kErrorInvalidArgument;
  const nvmlReturn_t rc = Get(
      handle, current, [](SimDevice& d) { return d.MigMode(); },
      [](const headroom::gpu::MigModeState& m) { return m.current ? 1U : 0U; });
  if (rc == nvml::kSuccess) *pending = *current;
  return rc;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceSetMigMode(nvmlDevice_t handle, unsigned int mode,
                                              nvmlReturn_t* activation_status) {
  std::lock_guard lock(g_mu);
  if (activation_status == nullptr || mode > 1) return nvml::kErrorInvalidArgument;
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  if (g_state->mig_mode_needs_reset) {
    // The change would wait for a GPU reset; this fake keeps no pending mode, so nothing changes.
    constexpr nvmlReturn_t kErrorResetRequired = 14;
    *activation_status = kErrorResetRequired;
    return nvml::kSuccess;
  }
  auto changed = device->SetMigMode(mode == 1);
  if (!changed) return ReturnFor(changed.error());
  *activation_status = nvml::kSuccess;
  PersistMig();
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfo(
    nvmlDevice_t handle, unsigned int profile, nvml::nvmlGpuInstanceProfileInfo_t* info) {
  std::lock_guard lock(g_mu);
  return GiProfileInfo(handle, profile, info);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceProfileInfoV(
    nvmlDevice_t handle, unsigned int profile, nvml::nvmlGpuInstanceProfileInfo_v2_t* info) {
  std::lock_guard lock(g_mu);
  if (info == nullptr) return nvml::kErrorInvalidArgument;
  if (info->version != nvml::kGpuInstanceProfileInfoV2) return kErrorArgumentVersionMismatch;
  const nvmlReturn_t rc = GiProfileInfo(handle, profile, info);
  const GiProfile* p = ProfileWhere(
      [profile](const GiProfile& q) { return q.nvml_value == static_cast<int>(profile); });
  if (rc == nvml::kSuccess && p != nullptr) {
    std::snprintf(info->name, sizeof(info->name), "MIG %s", p->name.c_str());
  }
  return rc;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstancePossiblePlacements_v2(
    nvmlDevice_t handle, unsigned int profile_id, nvml::nvmlGpuInstancePlacement_t* placements,
    unsigned int* count) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  if (count == nullptr) return nvml::kErrorInvalidArgument;
  if (nvmlReturn_t rc = ProfilesListed(*device); rc != nvml::kSuccess) return rc;
  const GiProfile* p = ProfileWhere(
      [profile_id](const GiProfile& q) { return q.id == static_cast<int>(profile_id); });
  if (p == nullptr) return nvml::kErrorInvalidArgument;
  if (placements == nullptr || *count < p->starts.size()) {
    *count = static_cast<unsigned int>(p->starts.size());
    return placements == nullptr ? nvml::kSuccess : nvml::kErrorInsufficientSize;
  }
  for (size_t i = 0; i < p->starts.size(); ++i) {
    placements[i] = {static_cast<unsigned int>(p->starts[i]),
                     static_cast<unsigned int>(p->memory_slices)};
  }
  *count = static_cast<unsigned int>(p->starts.size());
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstances(nvmlDevice_t handle, unsigned int profile_id,
                                                   nvml::nvmlGpuInstance_t* gis,
                                                   unsigned int* count) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  std::vector<MigGpuInstance> instances;
  if (nvmlReturn_t rc = Instances(*device, &instances); rc != nvml::kSuccess) return rc;
  std::vector<nvml::nvmlGpuInstance_t> handles;
  for (const MigGpuInstance& gi : instances) {
    if (gi.profile_id != static_cast<int>(profile_id)) continue;
    handles.push_back(
        reinterpret_cast<nvml::nvmlGpuInstance_t>(MigHandleFor(Kind::kGpuInstance, device, gi.id)));
  }
  return ReturnHandles(handles, gis, count);
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceCreateGpuInstanceWithPlacement(
    nvmlDevice_t handle, unsigned int profile_id, const nvml::nvmlGpuInstancePlacement_t* placement,
    nvml::nvmlGpuInstance_t* gi) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  if (placement == nullptr || gi == nullptr) return nvml::kErrorInvalidArgument;
  const GiProfile* p = ProfileWhere(
      [profile_id](const GiProfile& q) { return q.id == static_cast<int>(profile_id); });
  if (p != nullptr && static_cast<int>(placement->size) != p->memory_slices) {
    return nvml::kErrorInvalidArgument;
  }
  if (InjectedCreateFailure()) return nvml::kErrorInsufficientResources;
  auto id =
      device->CreateGpuInstance(static_cast<int>(profile_id), static_cast<int>(placement->start));
  if (!id) return ReturnFor(id.error());
  PersistMig();
  *gi = reinterpret_cast<nvml::nvmlGpuInstance_t>(MigHandleFor(Kind::kGpuInstance, device, *id));
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlGpuInstanceGetInfo(nvml::nvmlGpuInstance_t handle,
                                                nvml::nvmlGpuInstanceInfo_t* info) {
  std::lock_guard lock(g_mu);
  MigHandle* h = nullptr;
  MigGpuInstance gi;
  if (nvmlReturn_t rc = LookupGi(handle, &h, &gi); rc != nvml::kSuccess) return rc;
  if (info == nullptr) return nvml::kErrorInvalidArgument;
  info->device = reinterpret_cast<nvmlDevice_t>(h->device);
  info->id = static_cast<unsigned int>(gi.id);
  info->profileId = static_cast<unsigned int>(gi.profile_id);
  info->placement = {static_cast<unsigned int>(gi.start), static_cast<unsigned int>(gi.size)};
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlGpuInstanceDestroy(nvml::nvmlGpuInstance_t handle) {
  std::lock_guard lock(g_mu);
  MigHandle* h = nullptr;
  MigGpuInstance gi;
  if (nvmlReturn_t rc = LookupGi(handle, &h, &gi); rc != nvml::kSuccess) return rc;
  auto status = h->device->DestroyGpuInstance(gi.id);
  if (!status) return ReturnFor(status.error());
  PersistMig();
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfo(
    nvml::nvmlGpuInstance_t handle, unsigned int profile, unsigned int engine_profile,
    nvml::nvmlComputeInstanceProfileInfo_t* info) {
  std::lock_guard lock(g_mu);
  return CiProfileInfo(handle, profile, engine_profile, info);
}

FAKE_EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstanceProfileInfoV(
    nvml::nvmlGpuInstance_t handle, unsigned int profile, unsigned int engine_profile,
    nvml::nvmlComputeInstanceProfileInfo_v2_t* info) {
  std::lock_guard lock(g_mu);
  if (info == nullptr) return nvml::kErrorInvalidArgument;
  if (info->version != nvml::kComputeInstanceProfileInfoV2) return kErrorArgumentVersionMismatch;
  const nvmlReturn_t rc = CiProfileInfo(handle, profile, engine_profile, info);
  if (rc == nvml::kSuccess) std::snprintf(info->name, sizeof(info->name), "%dc", CiSlices(profile));
  return rc;
}

FAKE_EXPORT nvmlReturn_t nvmlGpuInstanceCreateComputeInstance(nvml::nvmlGpuInstance_t handle,
                                                              unsigned int profile_id,
                                                              nvml::nvmlComputeInstance_t* ci) {
  std::lock_guard lock(g_mu);
  MigHandle* h = nullptr;
  MigGpuInstance gi;
  if (nvmlReturn_t rc = LookupGi(handle, &h, &gi); rc != nvml::kSuccess) return rc;
  if (ci == nullptr || CiSlices(profile_id) == 0) return nvml::kErrorInvalidArgument;
  if (InjectedCreateFailure()) return nvml::kErrorInsufficientResources;
  auto id = h->device->CreateComputeInstance(gi.id, CiSlices(profile_id));
  if (!id) return ReturnFor(id.error());
  PersistMig();
  *ci = reinterpret_cast<nvml::nvmlComputeInstance_t>(
      MigHandleFor(Kind::kComputeInstance, h->device, gi.id, *id));
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlGpuInstanceGetComputeInstances(nvml::nvmlGpuInstance_t handle,
                                                            unsigned int profile_id,
                                                            nvml::nvmlComputeInstance_t* cis,
                                                            unsigned int* count) {
  std::lock_guard lock(g_mu);
  MigHandle* h = nullptr;
  MigGpuInstance gi;
  if (nvmlReturn_t rc = LookupGi(handle, &h, &gi); rc != nvml::kSuccess) return rc;
  std::vector<nvml::nvmlComputeInstance_t> handles;
  for (const auto& c : gi.compute_instances) {
    if (c.compute_slices != CiSlices(profile_id)) continue;
    handles.push_back(reinterpret_cast<nvml::nvmlComputeInstance_t>(
        MigHandleFor(Kind::kComputeInstance, h->device, gi.id, c.id)));
  }
  return ReturnHandles(handles, cis, count);
}

FAKE_EXPORT nvmlReturn_t nvmlComputeInstanceGetInfo_v2(nvml::nvmlComputeInstance_t handle,
                                                       nvml::nvmlComputeInstanceInfo_t* info) {
  std::lock_guard lock(g_mu);
  MigHandle* h = ResolveMig(handle, Kind::kComputeInstance);
  if (h == nullptr || info == nullptr) return nvml::kErrorInvalidArgument;
  auto ci = FindComputeInstance(*h->device, h->gpu_instance, h->compute_instance);
  if (!ci) return nvml::kErrorNotFound;
  info->device = reinterpret_cast<nvmlDevice_t>(h->device);
  info->gpuInstance = reinterpret_cast<nvml::nvmlGpuInstance_t>(
      MigHandleFor(Kind::kGpuInstance, h->device, h->gpu_instance));
  info->id = static_cast<unsigned int>(ci->id);
  info->profileId = CiProfileFor(ci->compute_slices);
  info->placement = {0, static_cast<unsigned int>(ci->compute_slices)};
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlComputeInstanceDestroy(nvml::nvmlComputeInstance_t handle) {
  std::lock_guard lock(g_mu);
  MigHandle* h = ResolveMig(handle, Kind::kComputeInstance);
  if (h == nullptr) return nvml::kErrorInvalidArgument;
  auto status = h->device->DestroyComputeInstance(h->gpu_instance, h->compute_instance);
  if (!status) return ReturnFor(status.error());
  PersistMig();
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t handle, unsigned int* count) {
  std::lock_guard lock(g_mu);
  return Get(
      handle, count, [](SimDevice& d) { return d.MigMode(); },
      [](const headroom::gpu::MigModeState&) {
        return g_state->mig_spec ? g_state->mig_spec->compute_slices : 0;
      });
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t handle,
                                                             unsigned int index,
                                                             nvmlDevice_t* mig) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  if (mig == nullptr) return nvml::kErrorInvalidArgument;
  std::vector<MigGpuInstance> instances;
  if (nvmlReturn_t rc = Instances(*device, &instances); rc != nvml::kSuccess) return rc;
  unsigned int i = 0;
  for (const MigGpuInstance& gi : instances) {
    for (const auto& ci : gi.compute_instances) {
      if (i++ != index) continue;
      *mig = reinterpret_cast<nvmlDevice_t>(MigHandleFor(Kind::kMigDevice, device, gi.id, ci.id));
      return nvml::kSuccess;
    }
  }
  return nvml::kErrorNotFound;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t mig, unsigned int* id) {
  std::lock_guard lock(g_mu);
  MigHandle* h = ResolveMig(mig, Kind::kMigDevice);
  if (h == nullptr || id == nullptr) return nvml::kErrorInvalidArgument;
  *id = static_cast<unsigned int>(h->gpu_instance);
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t mig, unsigned int* id) {
  std::lock_guard lock(g_mu);
  MigHandle* h = ResolveMig(mig, Kind::kMigDevice);
  if (h == nullptr || id == nullptr) return nvml::kErrorInvalidArgument;
  *id = static_cast<unsigned int>(h->compute_instance);
  return nvml::kSuccess;
}

FAKE_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t handle,
                                                                 unsigned int* count,
                                                                 nvml::nvmlProcessInfo_t* infos) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  if (count == nullptr) return nvml::kErrorInvalidArgument;
  auto processes = device->RunningProcesses();
  if (!processes) return ReturnFor(processes.error());
  if (infos == nullptr || *count < processes->size()) {
    *count = static_cast<unsigned int>(processes->size());
    return processes->empty() ? nvml::kSuccess : nvml::kErrorInsufficientSize;
  }
  for (size_t i = 0; i < processes->size(); ++i) {
    const headroom::gpu::GpuProcess& p = (*processes)[i];
    infos[i].pid = p.pid;
    infos[i].usedGpuMemory = p.used_memory_bytes.value_or(nvml::kValueNotAvailable);
    infos[i].gpuInstanceId =
        p.gpu_instance_id ? static_cast<unsigned int>(*p.gpu_instance_id) : kNoInstance;
    infos[i].computeInstanceId = p.gpu_instance_id ? 0 : kNoInstance;
  }
  *count = static_cast<unsigned int>(processes->size());
  return nvml::kSuccess;
}

#endif  // HEADROOM_FAKE_NVML_LEGACY

}  // namespace headroom::fake_nvml
