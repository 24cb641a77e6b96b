// NvmlApi: the NVML entry points headroom uses, bound from a loaded library with versioned
// names tried newest first (nvml.md §1). Only init, shutdown, error string, count and handle are
// required; every other pointer may be null, meaning the capability is absent. Vendor units (mW,
// mJ) are still in force at this layer. (nvmlErrorString is optional too: without it errors
// carry the numeric code only.) Immutable after Load, so thread-safe (NVML itself is).
#ifndef HEADROOM_GPU_NVML_NVML_API_H_
#define HEADROOM_GPU_NVML_NVML_API_H_

#include <string>

#include "core/result.h"
#include "gpu/nvml/nvml_library.h"
#include "gpu/nvml/nvml_types.h"

namespace headroom::gpu::nvml {

struct NvmlApi {
  using Dev = nvmlDevice_t;
  // Required.
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*get_count)(unsigned int*) = nullptr;
  nvmlReturn_t (*get_handle_by_index)(unsigned int, Dev*) = nullptr;
  // Optional from here on.
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*get_handle_by_uuid)(const char*, Dev*) = nullptr;
  nvmlReturn_t (*get_parent_of_mig)(Dev, Dev*) = nullptr;
  nvmlReturn_t (*get_index)(Dev, unsigned int*) = nullptr;
  nvmlReturn_t (*get_name)(Dev, char*, unsigned int) = nullptr;
  nvmlReturn_t (*get_uuid)(Dev, char*, unsigned int) = nullptr;
  nvmlReturn_t (*get_power_usage)(Dev, unsigned int*) = nullptr;
  nvmlReturn_t (*get_total_energy)(Dev, unsigned long long*) = nullptr;
  nvmlReturn_t (*get_field_values)(Dev, int, nvmlFieldValue_t*) = nullptr;
  nvmlReturn_t (*get_samples)(Dev, int, unsigned long long, int*, unsigned int*,
                              nvmlSample_t*) = nullptr;
  nvmlReturn_t (*get_power_limit)(Dev, unsigned int*) = nullptr;
  nvmlReturn_t (*get_power_limit_constraints)(Dev, unsigned int*, unsigned int*) = nullptr;
  nvmlReturn_t (*get_power_default_limit)(Dev, unsigned int*) = nullptr;
  nvmlReturn_t (*get_enforced_power_limit)(Dev, unsigned int*) = nullptr;
  nvmlReturn_t (*set_power_limit)(Dev, unsigned int) = nullptr;
  nvmlReturn_t (*get_clock_info)(Dev, int, unsigned int*) = nullptr;
  nvmlReturn_t (*get_max_clock_info)(Dev, int, unsigned int*) = nullptr;
  nvmlReturn_t (*get_supported_memory_clocks)(Dev, unsigned int*, unsigned int*) = nullptr;
  nvmlReturn_t (*get_supported_graphics_clocks)(Dev, unsigned int, unsigned int*,
                                                unsigned int*) = nullptr;
  nvmlReturn_t (*set_locked_clocks)(Dev, unsigned int, unsigned int) = nullptr;
  nvmlReturn_t (*reset_locked_clocks)(Dev) = nullptr;
  nvmlReturn_t (*get_utilization)(Dev, nvmlUtilization_t*) = nullptr;
  nvmlReturn_t (*get_temperature)(Dev, int, unsigned int*) = nullptr;
  nvmlReturn_t (*get_memory_info)(Dev, nvmlMemory_t*) = nullptr;
  nvmlReturn_t (*get_clock_event_reasons)(Dev, unsigned long long*) = nullptr;
  // MIG (all optional: pre-Ampere drivers lack them).
  using Gi = nvmlGpuInstance_t;
  using Ci = nvmlComputeInstance_t;
  nvmlReturn_t (*get_mig_mode)(Dev, unsigned int*, unsigned int*) = nullptr;
  nvmlReturn_t (*set_mig_mode)(Dev, unsigned int, nvmlReturn_t*) = nullptr;
  nvmlReturn_t (*get_gi_profile_info)(Dev, unsigned int, nvmlGpuInstanceProfileInfo_t*) = nullptr;
  nvmlReturn_t (*get_gi_profile_info_v)(Dev, unsigned int,
                                        nvmlGpuInstanceProfileInfo_v2_t*) = nullptr;
  nvmlReturn_t (*get_gpu_instances)(Dev, unsigned int, Gi*, unsigned int*) = nullptr;
  nvmlReturn_t (*get_gi_possible_placements)(Dev, unsigned int, nvmlGpuInstancePlacement_t*,
                                             unsigned int*) = nullptr;
  nvmlReturn_t (*create_gi_with_placement)(Dev, unsigned int, const nvmlGpuInstancePlacement_t*,
                                           Gi*) = nullptr;
  nvmlReturn_t (*gi_get_info)(Gi, nvmlGpuInstanceInfo_t*) = nullptr;
  nvmlReturn_t (*gi_destroy)(Gi) = nullptr;
  nvmlReturn_t (*get_ci_profile_info)(Gi, unsigned int, unsigned int,
                                      nvmlComputeInstanceProfileInfo_t*) = nullptr;
  nvmlReturn_t (*get_ci_profile_info_v)(Gi, unsigned int, unsigned int,
                                        nvmlComputeInstanceProfileInfo_v2_t*) = nullptr;
  nvmlReturn_t (*create_compute_instance)(Gi, unsigned int, Ci*) = nullptr;
  nvmlReturn_t (*get_compute_instances)(Gi, unsigned int, Ci*, unsigned int*) = nullptr;
  nvmlReturn_t (*ci_get_info)(Ci, nvmlComputeInstanceInfo_t*) = nullptr;
  nvmlReturn_t (*ci_destroy)(Ci) = nullptr;
  nvmlReturn_t (*get_max_mig_device_count)(Dev, unsigned int*) = nullptr;
  nvmlReturn_t (*get_mig_device_handle_by_index)(Dev, unsigned int, Dev*) = nullptr;
  nvmlReturn_t (*get_gi_id_of_mig_device)(Dev, unsigned int*) = nullptr;
  nvmlReturn_t (*get_ci_id_of_mig_device)(Dev, unsigned int*) = nullptr;
  nvmlReturn_t (*get_compute_running_processes)(Dev, unsigned int*, nvmlProcessInfo_t*) = nullptr;
  // Power smoothing (Blackwell and later; drivers before R575 lack them).
  nvmlReturn_t (*power_smoothing_activate_profile)(Dev, nvmlPowerSmoothingProfile_t*) = nullptr;
  nvmlReturn_t (*power_smoothing_update_profile)(Dev, nvmlPowerSmoothingProfile_t*) = nullptr;
  nvmlReturn_t (*power_smoothing_set_state)(Dev, nvmlPowerSmoothingState_t*) = nullptr;

  // Binds every entry point. kUnavailable naming the first missing required symbol.
  // REQUIRES: library outlives the returned table.
  [[nodiscard]] static core::Result<NvmlApi> Load(const NvmlLibrary& library);

  // The typed error for an NVML return code, with NVML's own text and the code's name
  // ("...: Insufficient Resources (NVML_ERROR_INSUFFICIENT_RESOURCES)"): NOT_SUPPORTED ->
  // kUnimplemented, NO_PERMISSION -> kPermissionDenied, GPU_IS_LOST -> kDataLoss, driver or
  // library missing -> kUnavailable, INSUFFICIENT_RESOURCES -> kResourceExhausted, IN_USE ->
  // kFailedPrecondition. `what` names the call ("GPU 0: power limit").
  core::Error ErrorFor(nvmlReturn_t code, const std::string& what) const;
};

}  // namespace headroom::gpu::nvml

#endif  // HEADROOM_GPU_NVML_NVML_API_H_
