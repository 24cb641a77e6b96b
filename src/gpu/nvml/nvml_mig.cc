// NvmlDevice's MIG methods: the NVML workflow of ../shared/brief/mig.md ("NVML workflow to apply a
// layout") behind the Device interface. Profile IDs, placements and ids are NVML's own.
#include <algorithm>
#include <array>
#include <iterator>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "gpu/nvml/nvml_device.h"

namespace headroom::gpu::nvml {
namespace {

using core::Error;
using core::Fail;

constexpr std::uint64_t kBytesPerMib = 1024 * 1024;

// Codes a profile query gives for a profile this GPU or driver does not have.
bool ProfileAbsent(nvmlReturn_t rc) {
  return rc == kErrorNotSupported || rc == kErrorInvalidArgument || rc == kErrorNotFound;
}

// A compute-instance profile of `gi` through the versioned call where the driver has it, else
// the plain one; FUNCTION_NOT_FOUND when it has neither.
nvmlReturn_t ComputeInstanceProfile(const NvmlApi& api, nvmlGpuInstance_t gi, unsigned int profile,
                                    nvmlComputeInstanceProfileInfo_t* info) {
  if (api.get_ci_profile_info_v != nullptr) {
    nvmlComputeInstanceProfileInfo_v2_t v2{};
    v2.version = kComputeInstanceProfileInfoV2;
    const nvmlReturn_t rc =
        api.get_ci_profile_info_v(gi, profile, kComputeInstanceEngineProfileShared, &v2);
    *info = {v2.id,
             v2.sliceCount,
             v2.instanceCount,
             v2.multiprocessorCount,
             v2.sharedCopyEngineCount,
             v2.sharedDecoderCount,
             v2.sharedEncoderCount,
             v2.sharedJpegCount,
             v2.sharedOfaCount};
    return rc;
  }
  if (api.get_ci_profile_info == nullptr) return kErrorFunctionNotFound;
  return api.get_ci_profile_info(gi, profile, kComputeInstanceEngineProfileShared, info);
}

// A GPU-instance profile in the Device's terms, from either form of NVML's profile info (they
// share every field but the version and name).
template <class Info>
MigProfileInfo ToProfileInfo(unsigned int nvml_profile, const Info& info) {
  return {.nvml_profile = static_cast<int>(nvml_profile),
          .id = static_cast<int>(info.id),
          .slices = static_cast<int>(info.sliceCount),
          .max_instances = static_cast<int>(info.instanceCount),
          .sm_count = static_cast<int>(info.multiprocessorCount),
          .memory_bytes = info.memorySizeMB * kBytesPerMib,
          .copy_engines = static_cast<int>(info.copyEngineCount),
          .decoders = static_cast<int>(info.decoderCount),
          .encoders = static_cast<int>(info.encoderCount),
          .jpeg = static_cast<int>(info.jpegCount),
          .ofa = static_cast<int>(info.ofaCount)};
}

// NVML profile `profile` of `device` through the versioned call where the driver has it (it also
// carries the name), else the plain one. REQUIRES: one of the two is bound.
nvmlReturn_t GpuInstanceProfile(const NvmlApi& api, nvmlDevice_t device, unsigned int profile,
                                MigProfileInfo* out) {
  if (api.get_gi_profile_info_v != nullptr) {
    nvmlGpuInstanceProfileInfo_v2_t info{};
    info.version = kGpuInstanceProfileInfoV2;
    const nvmlReturn_t rc = api.get_gi_profile_info_v(device, profile, &info);
    *out = ToProfileInfo(profile, info);
    info.name[sizeof(info.name) - 1] = '\0';
    out->name = info.name;
    return rc;
  }
  nvmlGpuInstanceProfileInfo_t info{};
  const nvmlReturn_t rc = api.get_gi_profile_info(device, profile, &info);
  *out = ToProfileInfo(profile, info);
  return rc;
}

}  // namespace

struct NvmlDevice::GiEntry {
  nvmlGpuInstance_t handle = nullptr;
  nvmlGpuInstanceInfo_t info = {};
  MigProfileInfo profile = {};
};

struct NvmlDevice::CiEntry {
  nvmlComputeInstance_t handle = nullptr;
  nvmlComputeInstanceInfo_t info = {};
  int compute_slices = 0;
  int sm_count = 0;
};

core::Result<MigModeState> NvmlDevice::MigMode() {
  HEADROOM_RETURN_IF_ERROR(Require(reinterpret_cast<const void*>(api_.get_mig_mode), "MIG mode"));
  unsigned int current = kMigDisable;
  unsigned int pending = kMigDisable;
  HEADROOM_RETURN_IF_ERROR(Check(api_.get_mig_mode(handle_, &current, &pending), "MIG mode"));
  return MigModeState{.current = current == kMigEnable, .pending = pending == kMigEnable};
}

core::Result<MigModeState> NvmlDevice::SetMigMode(bool enabled) {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.set_mig_mode), "set MIG mode"));
  // The activation status says whether the change applied now or waits for a reset; the mode
  // read back says the same, so it is what the caller gets.
  nvmlReturn_t activation = kSuccess;
  HEADROOM_RETURN_IF_ERROR(Check(
      api_.set_mig_mode(handle_, enabled ? kMigEnable : kMigDisable, &activation), "set MIG mode"));
  return MigMode();
}

core::Result<std::vector<MigProfileInfo>> NvmlDevice::GpuInstanceProfiles() const {
  if (api_.get_gi_profile_info_v == nullptr) {
    HEADROOM_RETURN_IF_ERROR(
        Require(reinterpret_cast<const void*>(api_.get_gi_profile_info),
                "GPU-instance profiles (nvmlDeviceGetGpuInstanceProfileInfo[V])"));
  }
  std::vector<MigProfileInfo> profiles;
  for (unsigned int profile = 0; profile < kGpuInstanceProfileCount; ++profile) {
    MigProfileInfo found;
    const nvmlReturn_t rc = GpuInstanceProfile(api_, handle_, profile, &found);
    if (ProfileAbsent(rc)) continue;
    HEADROOM_RETURN_IF_ERROR(
        Check(rc, fmt::format("GPU-instance profile info (NVML profile {:#x})", profile)));
    const bool seen = std::any_of(profiles.begin(), profiles.end(),
                                  [&found](const MigProfileInfo& p) { return p.id == found.id; });
    if (!seen) profiles.push_back(std::move(found));
  }
  return profiles;
}

core::Result<std::vector<MigPlacement>> NvmlDevice::PossiblePlacements(
    int profile_id, const std::string& what) const {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.get_gi_possible_placements), what.c_str()));
  // The usual two calls: the count first, then the placements.
  const auto id = static_cast<unsigned int>(profile_id);
  unsigned int count = 0;
  HEADROOM_RETURN_IF_ERROR(Check(api_.get_gi_possible_placements(handle_, id, nullptr, &count),
                                 what + ": possible placements (count)"));
  std::vector<nvmlGpuInstancePlacement_t> raw(std::max(count, 1U));
  count = static_cast<unsigned int>(raw.size());
  HEADROOM_RETURN_IF_ERROR(Check(api_.get_gi_possible_placements(handle_, id, raw.data(), &count),
                                 what + ": possible placements"));
  std::vector<MigPlacement> out;
  for (unsigned int i = 0; i < count && i < raw.size(); ++i) {
    out.push_back({static_cast<int>(raw[i].start), static_cast<int>(raw[i].size)});
  }
  std::sort(out.begin(), out.end(),
            [](const MigPlacement& a, const MigPlacement& b) { return a.start < b.start; });
  return out;
}

core::Result<std::vector<MigProfileInfo>> NvmlDevice::MigProfiles() {
  // Read-only: profile info and possible placements, never MIG mode changes or instances.
  HEADROOM_ASSIGN_OR_RETURN(std::vector<MigProfileInfo> profiles, GpuInstanceProfiles());
  std::optional<bool> mig_on;
  if (api_.get_mig_mode != nullptr) {
    unsigned int current = kMigDisable;
    unsigned int pending = kMigDisable;
    if (api_.get_mig_mode(handle_, &current, &pending) == kSuccess) {
      mig_on = current == kMigEnable;
    }
  }
  const std::string mode_note = !mig_on.has_value() ? ""
                                : *mig_on           ? " (MIG mode is enabled)"
                                                    : " (MIG mode is disabled)";
  if (profiles.empty()) {
    return Fail(Error::Unimplemented(fmt::format(
        "GPU {}: MIG profiles: the driver answered no GPU-instance profile (NVML profiles 0x0 to "
        "{:#x}: NOT_SUPPORTED or INVALID_ARGUMENT){}{}",
        info_.index, kGpuInstanceProfileCount - 1, mode_note,
        mig_on == false ? "; this driver may list them only with MIG mode enabled" : "")));
  }
  for (MigProfileInfo& profile : profiles) {
    auto placements = PossiblePlacements(
        profile.id, fmt::format("MIG profile {} ({})", profile.id,
                                profile.name.empty() ? "unnamed" : profile.name));
    if (!placements) {
      return Fail(Error(placements.error().code(), placements.error().message() + mode_note));
    }
    profile.placements = std::move(*placements);
  }
  return profiles;
}

core::Result<std::vector<NvmlDevice::GiEntry>> NvmlDevice::GpuInstances() const {
  for (const void* fn : {reinterpret_cast<const void*>(api_.get_gpu_instances),
                         reinterpret_cast<const void*>(api_.gi_get_info)}) {
    HEADROOM_RETURN_IF_ERROR(Require(fn, "MIG GPU instances"));
  }
  // With MIG off the profile queries answer NOT_SUPPORTED one by one, which would read as "no
  // instances"; say what it is instead.
  if (api_.get_mig_mode != nullptr) {
    unsigned int current = kMigDisable;
    unsigned int pending = kMigDisable;
    HEADROOM_RETURN_IF_ERROR(Check(api_.get_mig_mode(handle_, &current, &pending), "MIG mode"));
    if (current != kMigEnable) {
      return Fail(Error::Unimplemented(
          fmt::format("GPU {}: MIG instances: MIG mode is disabled", info_.index)));
    }
  }
  HEADROOM_ASSIGN_OR_RETURN(std::vector<MigProfileInfo> profiles, GpuInstanceProfiles());
  std::vector<GiEntry> entries;
  for (const MigProfileInfo& profile : profiles) {
    std::vector<nvmlGpuInstance_t> handles(static_cast<size_t>(std::max(profile.max_instances, 1)));
    unsigned int count = static_cast<unsigned int>(handles.size());
    HEADROOM_RETURN_IF_ERROR(
        Check(api_.get_gpu_instances(handle_, static_cast<unsigned int>(profile.id), handles.data(),
                                     &count),
              "MIG GPU instances"));
    for (unsigned int i = 0; i < count && i < handles.size(); ++i) {
      GiEntry entry{.handle = handles[i], .profile = profile};
      HEADROOM_RETURN_IF_ERROR(
          Check(api_.gi_get_info(handles[i], &entry.info), "MIG GPU-instance info"));
      entries.push_back(entry);
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const GiEntry& a, const GiEntry& b) { return a.info.id < b.info.id; });
  return entries;
}

core::Result<NvmlDevice::GiEntry> NvmlDevice::FindGpuInstance(int gpu_instance_id,
                                                              const char* what) const {
  HEADROOM_ASSIGN_OR_RETURN(std::vector<GiEntry> entries, GpuInstances());
  for (const GiEntry& entry : entries) {
    if (static_cast<int>(entry.info.id) == gpu_instance_id) return entry;
  }
  return Fail(Error::NotFound(
      fmt::format("GPU {}: {}: no GPU instance {}", info_.index, what, gpu_instance_id)));
}

core::Result<std::vector<NvmlDevice::CiEntry>> NvmlDevice::ComputeInstances(
    nvmlGpuInstance_t gi) const {
  for (const void* fn : {reinterpret_cast<const void*>(api_.get_compute_instances),
                         reinterpret_cast<const void*>(api_.ci_get_info)}) {
    HEADROOM_RETURN_IF_ERROR(Require(fn, "MIG compute instances"));
  }
  std::vector<CiEntry> entries;
  for (unsigned int profile = 0; profile < std::size(kComputeInstanceProfileSlices); ++profile) {
    nvmlComputeInstanceProfileInfo_t info{};
    const nvmlReturn_t rc = ComputeInstanceProfile(api_, gi, profile, &info);
    if (ProfileAbsent(rc)) continue;
    HEADROOM_RETURN_IF_ERROR(Check(rc, "compute-instance profiles"));
    std::vector<nvmlComputeInstance_t> handles(std::max(info.instanceCount, 1U));
    unsigned int count = static_cast<unsigned int>(handles.size());
    HEADROOM_RETURN_IF_ERROR(Check(api_.get_compute_instances(gi, info.id, handles.data(), &count),
                                   "MIG compute instances"));
    for (unsigned int i = 0; i < count && i < handles.size(); ++i) {
      CiEntry entry{.handle = handles[i],
                    .compute_slices = static_cast<int>(info.sliceCount),
                    .sm_count = static_cast<int>(info.multiprocessorCount)};
      HEADROOM_RETURN_IF_ERROR(
          Check(api_.ci_get_info(handles[i], &entry.info), "MIG compute-instance info"));
      entries.push_back(entry);
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const CiEntry& a, const CiEntry& b) { return a.info.id < b.info.id; });
  return entries;
}

void NvmlDevice::FillMigDeviceUuids(std::vector<MigGpuInstance>* instances) const {
  // MIG device handles carry the UUIDs CUDA_VISIBLE_DEVICES takes; without these entry points
  // the UUIDs stay empty rather than failing the whole read.
  for (const void* fn : {reinterpret_cast<const void*>(api_.get_max_mig_device_count),
                         reinterpret_cast<const void*>(api_.get_mig_device_handle_by_index),
                         reinterpret_cast<const void*>(api_.get_gi_id_of_mig_device),
                         reinterpret_cast<const void*>(api_.get_ci_id_of_mig_device),
                         reinterpret_cast<const void*>(api_.get_uuid)}) {
    if (fn == nullptr) return;
  }
  unsigned int max_count = 0;
  if (api_.get_max_mig_device_count(handle_, &max_count) != kSuccess) return;
  for (unsigned int index = 0; index < max_count; ++index) {
    nvmlDevice_t mig = nullptr;
    unsigned int gi_id = 0;
    unsigned int ci_id = 0;
    std::array<char, kDeviceUuidBufferSize> uuid{};
    // Unused slots answer NOT_FOUND.
    if (api_.get_mig_device_handle_by_index(handle_, index, &mig) != kSuccess ||
        api_.get_gi_id_of_mig_device(mig, &gi_id) != kSuccess ||
        api_.get_ci_id_of_mig_device(mig, &ci_id) != kSuccess ||
        api_.get_uuid(mig, uuid.data(), kDeviceUuidBufferSize) != kSuccess) {
      continue;
    }
    for (MigGpuInstance& gi : *instances) {
      if (gi.id != static_cast<int>(gi_id)) continue;
      for (MigComputeInstance& ci : gi.compute_instances) {
        if (ci.id == static_cast<int>(ci_id)) ci.uuid = uuid.data();
      }
    }
  }
}

core::Result<std::vector<MigGpuInstance>> NvmlDevice::MigInstances() {
  HEADROOM_ASSIGN_OR_RETURN(std::vector<GiEntry> entries, GpuInstances());
  std::vector<MigGpuInstance> out;
  for (const GiEntry& entry : entries) {
    MigGpuInstance gi{.id = static_cast<int>(entry.info.id),
                      .profile_id = static_cast<int>(entry.info.profileId),
                      .start = static_cast<int>(entry.info.placement.start),
                      .size = static_cast<int>(entry.info.placement.size),
                      .sm_count = entry.profile.sm_count,
                      .memory_bytes = entry.profile.memory_bytes};
    HEADROOM_ASSIGN_OR_RETURN(std::vector<CiEntry> cis, ComputeInstances(entry.handle));
    for (const CiEntry& ci : cis) {
      gi.compute_instances.push_back({.id = static_cast<int>(ci.info.id),
                                      .compute_slices = ci.compute_slices,
                                      .sm_count = ci.sm_count});
    }
    out.push_back(std::move(gi));
  }
  FillMigDeviceUuids(&out);
  return out;
}

core::Result<int> NvmlDevice::CreateGpuInstance(int profile_id, int start) {
  for (const void* fn : {reinterpret_cast<const void*>(api_.create_gi_with_placement),
                         reinterpret_cast<const void*>(api_.gi_get_info)}) {
    HEADROOM_RETURN_IF_ERROR(Require(fn, "create GPU instance"));
  }
  const std::string what =
      fmt::format("create GPU instance (profile {} at memory slice {})", profile_id, start);
  // The placement's size comes from the driver's own list of placements for the profile.
  HEADROOM_ASSIGN_OR_RETURN(std::vector<MigPlacement> placements,
                            PossiblePlacements(profile_id, what));
  auto placement = std::find_if(placements.begin(), placements.end(),
                                [start](const MigPlacement& p) { return p.start == start; });
  if (placement == placements.end()) {
    std::vector<int> starts;
    for (const MigPlacement& p : placements) starts.push_back(p.start);
    return Fail(Error::InvalidArgument(fmt::format("GPU {}: {}: the driver allows starts {}",
                                                   info_.index, what, fmt::join(starts, ","))));
  }
  const nvmlGpuInstancePlacement_t chosen{static_cast<unsigned int>(placement->start),
                                          static_cast<unsigned int>(placement->size)};
  nvmlGpuInstance_t gi = nullptr;
  HEADROOM_RETURN_IF_ERROR(Check(
      api_.create_gi_with_placement(handle_, static_cast<unsigned int>(profile_id), &chosen, &gi),
      what));
  nvmlGpuInstanceInfo_t info{};
  HEADROOM_RETURN_IF_ERROR(Check(api_.gi_get_info(gi, &info), what + ": info"));
  return static_cast<int>(info.id);
}

core::Result<int> NvmlDevice::CreateComputeInstance(int gpu_instance_id, int compute_slices) {
  for (const void* fn : {reinterpret_cast<const void*>(api_.create_compute_instance),
                         reinterpret_cast<const void*>(api_.ci_get_info)}) {
    HEADROOM_RETURN_IF_ERROR(Require(fn, "create compute instance"));
  }
  const std::string what = fmt::format("create {}c compute instance in GPU instance {}",
                                       compute_slices, gpu_instance_id);
  const auto* slot = std::find(std::begin(kComputeInstanceProfileSlices),
                               std::end(kComputeInstanceProfileSlices), compute_slices);
  if (slot == std::end(kComputeInstanceProfileSlices)) {
    return Fail(Error::InvalidArgument(
        fmt::format("GPU {}: {}: NVML has no such compute-instance profile", info_.index, what)));
  }
  const auto profile = static_cast<unsigned int>(slot - std::begin(kComputeInstanceProfileSlices));
  HEADROOM_ASSIGN_OR_RETURN(GiEntry gi,
                            FindGpuInstance(gpu_instance_id, "create compute instance"));
  nvmlComputeInstanceProfileInfo_t profile_info{};
  HEADROOM_RETURN_IF_ERROR(
      Check(ComputeInstanceProfile(api_, gi.handle, profile, &profile_info), what + ": profile"));
  const unsigned int profile_id = profile_info.id;
  nvmlComputeInstance_t ci = nullptr;
  HEADROOM_RETURN_IF_ERROR(Check(api_.create_compute_instance(gi.handle, profile_id, &ci), what));
  nvmlComputeInstanceInfo_t info{};
  HEADROOM_RETURN_IF_ERROR(Check(api_.ci_get_info(ci, &info), what + ": info"));
  return static_cast<int>(info.id);
}

core::Status NvmlDevice::DestroyComputeInstance(int gpu_instance_id, int compute_instance_id) {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.ci_destroy), "destroy compute instance"));
  HEADROOM_ASSIGN_OR_RETURN(GiEntry gi,
                            FindGpuInstance(gpu_instance_id, "destroy compute instance"));
  HEADROOM_ASSIGN_OR_RETURN(std::vector<CiEntry> cis, ComputeInstances(gi.handle));
  for (const CiEntry& ci : cis) {
    if (static_cast<int>(ci.info.id) != compute_instance_id) continue;
    return Check(api_.ci_destroy(ci.handle),
                 fmt::format("destroy compute instance {} of GPU instance {}", compute_instance_id,
                             gpu_instance_id));
  }
  return Fail(Error::NotFound(fmt::format("GPU {}: no compute instance {} in GPU instance {}",
                                          info_.index, compute_instance_id, gpu_instance_id)));
}

core::Status NvmlDevice::DestroyGpuInstance(int gpu_instance_id) {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.gi_destroy), "destroy GPU instance"));
  HEADROOM_ASSIGN_OR_RETURN(GiEntry gi, FindGpuInstance(gpu_instance_id, "destroy GPU instance"));
  return Check(api_.gi_destroy(gi.handle), fmt::format("destroy GPU instance {}", gpu_instance_id));
}

core::Result<std::vector<GpuProcess>> NvmlDevice::RunningProcesses() {
  HEADROOM_RETURN_IF_ERROR(Require(
      reinterpret_cast<const void*>(api_.get_compute_running_processes), "running processes"));
  // The usual two calls; processes can start in between, hence the spare room and the retry.
  std::vector<nvmlProcessInfo_t> raw;
  unsigned int count = 0;
  nvmlReturn_t rc = api_.get_compute_running_processes(handle_, &count, nullptr);
  for (int attempt = 0; attempt < 3 && rc == kErrorInsufficientSize; ++attempt) {
    raw.resize(count + 8);
    count = static_cast<unsigned int>(raw.size());
    rc = api_.get_compute_running_processes(handle_, &count, raw.data());
  }
  HEADROOM_RETURN_IF_ERROR(Check(rc, "running processes"));
  std::vector<GpuProcess> out;
  for (unsigned int i = 0; i < count && i < raw.size(); ++i) {
    GpuProcess process{.pid = raw[i].pid};
    if (raw[i].usedGpuMemory != kValueNotAvailable)
      process.used_memory_bytes = raw[i].usedGpuMemory;
    if (raw[i].gpuInstanceId != 0xFFFFFFFFU) {
      process.gpu_instance_id = static_cast<int>(raw[i].gpuInstanceId);
    }
    out.push_back(process);
  }
  return out;
}

}  // namespace headroom::gpu::nvml
