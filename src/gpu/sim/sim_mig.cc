#include "gpu/sim/sim_mig.h"

#include <algorithm>
#include <functional>
#include <set>

#include <fmt/format.h>

#include "mig/layout.h"

namespace headroom::gpu::sim {
namespace {

using core::Error;
using core::Fail;

// Compute-instance sizes NVML has for these GPUs (NVML_COMPUTE_INSTANCE_PROFILE_*_SLICE).
constexpr int kComputeInstanceSizes[] = {1, 2, 3, 4, 7};

// The lowest id >= `first` that `taken` lacks, as drivers hand them out.
template <class T>
int LowestFreeId(const std::vector<T>& taken, int first) {
  int id = first;
  while (std::any_of(taken.begin(), taken.end(), [id](const T& t) { return t.id == id; })) ++id;
  return id;
}

}  // namespace

SimMig::SimMig(mig::GpuMigSpec spec, bool enabled, int gpu_index, std::string gpu_uuid,
               std::vector<GpuProcess> processes)
    : spec_(std::move(spec)),
      enabled_(enabled),
      gpu_index_(gpu_index),
      gpu_uuid_(std::move(gpu_uuid)),
      processes_(std::move(processes)) {}

std::string SimMig::Name(const Gi& gi) const {
  return fmt::format("{}@{}", gi.profile.name, gi.start);
}

core::Status SimMig::SetEnabled(bool enabled) {
  if (!enabled && !instances_.empty()) {
    return Fail(Error::FailedPrecondition(
        fmt::format("GPU {}: MIG mode cannot be turned off while {} GPU instances exist",
                    gpu_index_, instances_.size())));
  }
  enabled_ = enabled;
  return core::Ok();
}

core::Status SimMig::RequireEnabled(const char* what) const {
  if (enabled_) return core::Ok();
  return Fail(
      Error::Unimplemented(fmt::format("GPU {}: {}: MIG mode is disabled", gpu_index_, what)));
}

core::Result<SimMig::Gi*> SimMig::Find(int gpu_instance_id, const char* what) {
  for (Gi& gi : instances_) {
    if (gi.id == gpu_instance_id) return &gi;
  }
  return Fail(Error::NotFound(
      fmt::format("GPU {}: {}: no GPU instance {}", gpu_index_, what, gpu_instance_id)));
}

core::Status SimMig::CheckIdle(int gpu_instance_id, const char* what) const {
  for (const GpuProcess& p : processes_) {
    if (!p.gpu_instance_id.has_value() || *p.gpu_instance_id == gpu_instance_id) {
      return Fail(Error::FailedPrecondition(
          fmt::format("GPU {}: {}: in use by process {}", gpu_index_, what, p.pid)));
    }
  }
  return core::Ok();
}

core::Status SimMig::CheckPlacement(const std::vector<Gi>& gis, const mig::GiProfile& profile,
                                    int start) const {
  if (!profile.AllowsStart(start)) {
    return Fail(Error::InvalidArgument(fmt::format("GPU {}: {} cannot start at memory slice {}",
                                                   gpu_index_, profile.name, start)));
  }
  mig::Layout layout;
  for (const Gi& gi : gis)
    layout.instances.push_back({.profile = gi.profile.name, .start = gi.start});
  layout.instances.push_back({.profile = profile.name, .start = start});
  if (auto valid = mig::ValidateLayout(spec_, layout); !valid) {
    return Fail(
        Error::ResourceExhausted(fmt::format("GPU {}: no room for {}@{}: {}", gpu_index_,
                                             profile.name, start, valid.error().message())));
  }
  return core::Ok();
}

core::Status SimMig::CheckComputeInstance(const Gi& gi, int compute_slices) const {
  const bool known = std::find(std::begin(kComputeInstanceSizes), std::end(kComputeInstanceSizes),
                               compute_slices) != std::end(kComputeInstanceSizes);
  if (!known || compute_slices > gi.profile.compute_slices) {
    return Fail(Error::InvalidArgument(fmt::format("GPU {}: no {}c compute instance in {}",
                                                   gpu_index_, compute_slices, Name(gi))));
  }
  int used = 0;
  for (const Ci& ci : gi.compute_instances) used += ci.compute_slices;
  if (used + compute_slices > gi.profile.compute_slices) {
    return Fail(Error::ResourceExhausted(
        fmt::format("GPU {}: no room for a {}c compute instance in {} ({} of {} slices used)",
                    gpu_index_, compute_slices, Name(gi), used, gi.profile.compute_slices)));
  }
  return core::Ok();
}

std::string SimMig::MigUuid(int gpu_instance_id, int compute_instance_id) const {
  // Stable per (GPU, GI, CI), shaped like a real MIG device UUID.
  const std::size_t h = std::hash<std::string>{}(
      fmt::format("{}/mig/{}/{}", gpu_uuid_, gpu_instance_id, compute_instance_id));
  const std::size_t g = std::hash<std::string>{}(
      fmt::format("{}/{}/{}/mig", compute_instance_id, gpu_instance_id, gpu_uuid_));
  return fmt::format("MIG-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", h & 0xffffffffU,
                     (h >> 32) & 0xffffU, (h >> 48) & 0xffffU, g & 0xffffU,
                     (g >> 16) & 0xffffffffffffULL);
}

core::Result<std::vector<MigGpuInstance>> SimMig::Instances() const {
  HEADROOM_RETURN_IF_ERROR(RequireEnabled("MIG instances"));
  std::vector<MigGpuInstance> out;
  for (const Gi& gi : instances_) {
    MigGpuInstance instance{
        .id = gi.id,
        .profile_id = gi.profile.id,
        .start = gi.start,
        .size = gi.profile.memory_slices,
        .sm_count = gi.profile.sm_count,
        .memory_bytes = static_cast<std::uint64_t>(gi.profile.memory_gib * core::kBytesPerGib)};
    for (const Ci& ci : gi.compute_instances) {
      instance.compute_instances.push_back(
          {.id = ci.id,
           .compute_slices = ci.compute_slices,
           .sm_count = gi.profile.sm_count * ci.compute_slices / gi.profile.compute_slices,
           .uuid = MigUuid(gi.id, ci.id)});
    }
    out.push_back(std::move(instance));
  }
  return out;
}

std::vector<MigProfileInfo> SimMig::Profiles() const {
  std::vector<MigProfileInfo> out;
  for (const mig::GiProfile& p : spec_.profiles) {
    MigProfileInfo info{
        .nvml_profile = p.nvml_value,
        .id = p.id,
        .name = "MIG " + p.name,
        .slices = p.compute_slices,
        .max_instances = p.max_instances,
        .sm_count = p.sm_count,
        .memory_bytes = static_cast<std::uint64_t>(p.memory_gib * core::kBytesPerGib),
        .copy_engines = p.engines.copy,
        .decoders = p.engines.decoders,
        .encoders = p.engines.encoders,
        .jpeg = p.engines.jpeg,
        .ofa = p.engines.ofa};
    for (int start : p.starts) info.placements.push_back({start, p.memory_slices});
    out.push_back(std::move(info));
  }
  std::sort(out.begin(), out.end(), [](const MigProfileInfo& a, const MigProfileInfo& b) {
    return a.nvml_profile < b.nvml_profile;
  });
  return out;
}

core::Result<int> SimMig::CreateGpuInstance(int profile_id, int start) {
  HEADROOM_RETURN_IF_ERROR(RequireEnabled("create GPU instance"));
  const mig::GiProfile* profile = spec_.FindProfileById(profile_id);
  if (profile == nullptr) {
    return Fail(Error::InvalidArgument(fmt::format("GPU {}: no GPU-instance profile {} on {}",
                                                   gpu_index_, profile_id, spec_.name)));
  }
  HEADROOM_RETURN_IF_ERROR(CheckPlacement(instances_, *profile, start));
  const int id = LowestFreeId(instances_, 1);
  instances_.push_back({.id = id, .profile = *profile, .start = start});
  std::sort(instances_.begin(), instances_.end(),
            [](const Gi& a, const Gi& b) { return a.id < b.id; });
  return id;
}

core::Result<int> SimMig::CreateComputeInstance(int gpu_instance_id, int compute_slices) {
  HEADROOM_RETURN_IF_ERROR(RequireEnabled("create compute instance"));
  HEADROOM_ASSIGN_OR_RETURN(Gi * gi, Find(gpu_instance_id, "create compute instance"));
  HEADROOM_RETURN_IF_ERROR(CheckComputeInstance(*gi, compute_slices));
  const int id = LowestFreeId(gi->compute_instances, 0);
  gi->compute_instances.push_back({.id = id, .compute_slices = compute_slices});
  std::sort(gi->compute_instances.begin(), gi->compute_instances.end(),
            [](const Ci& a, const Ci& b) { return a.id < b.id; });
  return id;
}

core::Status SimMig::DestroyComputeInstance(int gpu_instance_id, int compute_instance_id) {
  HEADROOM_RETURN_IF_ERROR(RequireEnabled("destroy compute instance"));
  HEADROOM_ASSIGN_OR_RETURN(Gi * gi, Find(gpu_instance_id, "destroy compute instance"));
  auto ci =
      std::find_if(gi->compute_instances.begin(), gi->compute_instances.end(),
                   [compute_instance_id](const Ci& c) { return c.id == compute_instance_id; });
  if (ci == gi->compute_instances.end()) {
    return Fail(Error::NotFound(fmt::format("GPU {}: no compute instance {} in {}", gpu_index_,
                                            compute_instance_id, Name(*gi))));
  }
  HEADROOM_RETURN_IF_ERROR(CheckIdle(gpu_instance_id, "destroy compute instance"));
  gi->compute_instances.erase(ci);
  return core::Ok();
}

core::Status SimMig::DestroyGpuInstance(int gpu_instance_id) {
  HEADROOM_RETURN_IF_ERROR(RequireEnabled("destroy GPU instance"));
  HEADROOM_ASSIGN_OR_RETURN(Gi * gi, Find(gpu_instance_id, "destroy GPU instance"));
  HEADROOM_RETURN_IF_ERROR(CheckIdle(gpu_instance_id, "destroy GPU instance"));
  if (!gi->compute_instances.empty()) {
    return Fail(Error::FailedPrecondition(
        fmt::format("GPU {}: destroy GPU instance: {} still has {} compute instance(s)", gpu_index_,
                    Name(*gi), gi->compute_instances.size())));
  }
  instances_.erase(instances_.begin() + (gi - instances_.data()));
  return core::Ok();
}

core::Status SimMig::Restore(bool enabled, const std::vector<MigGpuInstance>& instances) {
  std::vector<Gi> restored;
  std::set<int> gi_ids;
  for (const MigGpuInstance& want : instances) {
    const mig::GiProfile* profile = spec_.FindProfileById(want.profile_id);
    if (profile == nullptr || !gi_ids.insert(want.id).second) {
      return Fail(Error::InvalidArgument(fmt::format(
          "GPU {}: MIG state: GPU instance {} has an unknown profile {} or a repeated id",
          gpu_index_, want.id, want.profile_id)));
    }
    HEADROOM_RETURN_IF_ERROR(CheckPlacement(restored, *profile, want.start));
    Gi gi{.id = want.id, .profile = *profile, .start = want.start};
    std::set<int> ci_ids;
    for (const MigComputeInstance& ci : want.compute_instances) {
      HEADROOM_RETURN_IF_ERROR(CheckComputeInstance(gi, ci.compute_slices));
      if (!ci_ids.insert(ci.id).second) {
        return Fail(Error::InvalidArgument(
            fmt::format("GPU {}: MIG state: compute instance id {} repeated in {}", gpu_index_,
                        ci.id, Name(gi))));
      }
      gi.compute_instances.push_back({.id = ci.id, .compute_slices = ci.compute_slices});
    }
    restored.push_back(std::move(gi));
  }
  std::sort(restored.begin(), restored.end(), [](const Gi& a, const Gi& b) { return a.id < b.id; });
  enabled_ = enabled;
  instances_ = std::move(restored);
  return core::Ok();
}

}  // namespace headroom::gpu::sim
