// SimMig: the MIG state of one simulated GPU (mode, GPU instances, compute instances) kept in
// memory and checked with the MIG catalog's placement rules (mig::ValidateLayout), answering as
// a driver does: a placement that overlaps or exceeds a profile's count is kResourceExhausted,
// an unknown profile or start slot kInvalidArgument, destroying what a pretend process uses
// kFailedPrecondition, anything with MIG mode off kUnimplemented. Thread-compatible: SimDevice
// locks it.
#ifndef HEADROOM_GPU_SIM_SIM_MIG_H_
#define HEADROOM_GPU_SIM_SIM_MIG_H_

#include <string>
#include <vector>

#include "core/result.h"
#include "gpu/device.h"
#include "mig/profile.h"

namespace headroom::gpu::sim {

// Invariants: instances_ satisfy spec_'s placement rules; GPU-instance ids are unique, and
// compute-instance ids unique within their GPU instance; compute instances fit their GPU
// instance's compute slices.
class SimMig {
 public:
  // `gpu_index` and `gpu_uuid` name the GPU in errors and seed the MIG device UUIDs.
  SimMig(mig::GpuMigSpec spec, bool enabled, int gpu_index, std::string gpu_uuid,
         std::vector<GpuProcess> processes);

  MigModeState mode() const { return {enabled_, enabled_}; }
  // Takes effect at once (a simulated GPU needs no reset); off needs no GPU instances left.
  core::Status SetEnabled(bool enabled);
  const mig::GpuMigSpec& spec() const { return spec_; }
  const std::vector<GpuProcess>& processes() const { return processes_; }

  [[nodiscard]] core::Result<std::vector<MigGpuInstance>> Instances() const;
  // The catalog's profiles as a driver lists them (by NVML profile value), whatever the mode.
  std::vector<MigProfileInfo> Profiles() const;
  [[nodiscard]] core::Result<int> CreateGpuInstance(int profile_id, int start);
  [[nodiscard]] core::Result<int> CreateComputeInstance(int gpu_instance_id, int compute_slices);
  [[nodiscard]] core::Status DestroyComputeInstance(int gpu_instance_id, int compute_instance_id);
  [[nodiscard]] core::Status DestroyGpuInstance(int gpu_instance_id);

  // Replaces the whole state, ids included (a driver's state as it was), after checking it
  // against the invariants; on error nothing changes. SM counts, memory and UUIDs are derived.
  [[nodiscard]] core::Status Restore(bool enabled, const std::vector<MigGpuInstance>& instances);

 private:
  struct Ci {
    int id = 0;
    int compute_slices = 0;
  };
  struct Gi {
    int id = 0;
    mig::GiProfile profile = {};
    int start = 0;
    std::vector<Ci> compute_instances = {};
  };

  core::Status RequireEnabled(const char* what) const;
  core::Result<Gi*> Find(int gpu_instance_id, const char* what);
  // kFailedPrecondition when a pretend process runs in the GPU instance (or on the whole GPU).
  core::Status CheckIdle(int gpu_instance_id, const char* what) const;
  // Whether `gis` with a GI of `profile` at `start` added keeps the placement rules.
  core::Status CheckPlacement(const std::vector<Gi>& gis, const mig::GiProfile& profile,
                              int start) const;
  core::Status CheckComputeInstance(const Gi& gi, int compute_slices) const;
  std::string MigUuid(int gpu_instance_id, int compute_instance_id) const;
  std::string Name(const Gi& gi) const;

  const mig::GpuMigSpec spec_;
  bool enabled_;
  const int gpu_index_;
  const std::string gpu_uuid_;
  const std::vector<GpuProcess> processes_;
  std::vector<Gi> instances_;  // by id
};

}  // namespace headroom::gpu::sim

#endif  // HEADROOM_GPU_SIM_SIM_MIG_H_
