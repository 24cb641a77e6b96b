#include "gpu/nvml/nvml_api.h"

#include <initializer_list>

#include <fmt/format.h>

namespace headroom::gpu::nvml {
namespace {

// Binds `*fn` to the first of `names` the library exports; leaves it null if none.
template <class F>
void Bind(const NvmlLibrary& lib, F*& fn, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    if (void* sym = lib.Symbol(name)) {
      fn = reinterpret_cast<F*>(sym);
      return;
    }
  }
  fn = nullptr;
}

}  // namespace

core::Result<NvmlApi> NvmlApi::Load(const NvmlLibrary& lib) {
  NvmlApi api;
  Bind(lib, api.init, {"nvmlInit_v2", "nvmlInit"});
  Bind(lib, api.shutdown, {"nvmlShutdown"});
  Bind(lib, api.error_string, {"nvmlErrorString"});
  Bind(lib, api.get_count, {"nvmlDeviceGetCount_v2", "nvmlDeviceGetCount"});
  Bind(lib, api.get_handle_by_index,
       {"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetHandleByIndex"});
  const std::pair<const void*, const char*> required[] = {
      {reinterpret_cast<const void*>(api.init), "nvmlInit_v2"},
      {reinterpret_cast<const void*>(api.shutdown), "nvmlShutdown"},
      {reinterpret_cast<const void*>(api.get_count), "nvmlDeviceGetCount_v2"},
      {reinterpret_cast<const void*>(api.get_handle_by_index), "nvmlDeviceGetHandleByIndex_v2"}};
  for (const auto& [fn, name] : required) {
    if (fn == nullptr) {
      return core::Fail(core::Error::Unavailable(
          fmt::format("{} lacks the required NVML function {} (driver too old or not NVML?)",
                      lib.path(), name)));
    }
  }
  Bind(lib, api.get_handle_by_uuid, {"nvmlDeviceGetHandleByUUID"});
  Bind(lib, api.get_parent_of_mig, {"nvmlDeviceGetDeviceHandleFromMigDeviceHandle"});
  Bind(lib, api.get_index, {"nvmlDeviceGetIndex"});
  Bind(lib, api.get_name, {"nvmlDeviceGetName"});
  Bind(lib, api.get_uuid, {"nvmlDeviceGetUUID"});
  Bind(lib, api.get_power_usage, {"nvmlDeviceGetPowerUsage"});
  Bind(lib, api.get_total_energy, {"nvmlDeviceGetTotalEnergyConsumption"});
  Bind(lib, api.get_field_values, {"nvmlDeviceGetFieldValues"});
  Bind(lib, api.get_samples, {"nvmlDeviceGetSamples"});
  Bind(lib, api.get_power_limit, {"nvmlDeviceGetPowerManagementLimit"});
  Bind(lib, api.get_power_limit_constraints, {"nvmlDeviceGetPowerManagementLimitConstraints"});
  Bind(lib, api.get_power_default_limit, {"nvmlDeviceGetPowerManagementDefaultLimit"});
  Bind(lib, api.get_enforced_power_limit, {"nvmlDeviceGetEnforcedPowerLimit"});
  Bind(lib, api.set_power_limit, {"nvmlDeviceSetPowerManagementLimit"});
  Bind(lib, api.get_clock_info, {"nvmlDeviceGetClockInfo"});
  Bind(lib, api.get_max_clock_info, {"nvmlDeviceGetMaxClockInfo"});
  Bind(lib, api.get_supported_memory_clocks, {"nvmlDeviceGetSupportedMemoryClocks"});
  Bind(lib, api.get_supported_graphics_clocks, {"nvmlDeviceGetSupportedGraphicsClocks"});
  Bind(lib, api.set_locked_clocks, {"nvmlDeviceSetGpuLockedClocks"});
  Bind(lib, api.reset_locked_clocks, {"nvmlDeviceResetGpuLockedClocks"});
  Bind(lib, api.get_utilization, {"nvmlDeviceGetUtilizationRates"});
  Bind(lib, api.get_temperature, {"nvmlDeviceGetTemperature"});
  Bind(lib, api.get_memory_info, {"nvmlDeviceGetMemoryInfo"});
  // The 12.x name first; the deprecated name is still exported by newer drivers.
  Bind(lib, api.get_clock_event_reasons,
       {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  Bind(lib, api.get_mig_mode, {"nvmlDeviceGetMigMode"});
  Bind(lib, api.set_mig_mode, {"nvmlDeviceSetMigMode"});
  Bind(lib, api.get_gi_profile_info, {"nvmlDeviceGetGpuInstanceProfileInfo"});
  Bind(lib, api.get_gi_profile_info_v, {"nvmlDeviceGetGpuInstanceProfileInfoV"});
  Bind(lib, api.get_gpu_instances, {"nvmlDeviceGetGpuInstances"});
  // The unversioned placements call has another signature (nvml.md §1); only _v2 is bound.
  Bind(lib, api.get_gi_possible_placements, {"nvmlDeviceGetGpuInstancePossiblePlacements_v2"});
  Bind(lib, api.create_gi_with_placement, {"nvmlDeviceCreateGpuInstanceWithPlacement"});
  Bind(lib, api.gi_get_info, {"nvmlGpuInstanceGetInfo"});
  Bind(lib, api.gi_destroy, {"nvmlGpuInstanceDestroy"});
  Bind(lib, api.get_ci_profile_info, {"nvmlGpuInstanceGetComputeInstanceProfileInfo"});
  Bind(lib, api.get_ci_profile_info_v, {"nvmlGpuInstanceGetComputeInstanceProfileInfoV"});
  Bind(lib, api.create_compute_instance, {"nvmlGpuInstanceCreateComputeInstance"});
  Bind(lib, api.get_compute_instances, {"nvmlGpuInstanceGetComputeInstances"});
  // The old name fills a prefix of the same struct; we read no field it lacks.
  Bind(lib, api.ci_get_info, {"nvmlComputeInstanceGetInfo_v2", "nvmlComputeInstanceGetInfo"});
  Bind(lib, api.ci_destroy, {"nvmlComputeInstanceDestroy"});
  Bind(lib, api.get_max_mig_device_count, {"nvmlDeviceGetMaxMigDeviceCount"});
  Bind(lib, api.get_mig_device_handle_by_index, {"nvmlDeviceGetMigDeviceHandleByIndex"});
  Bind(lib, api.get_gi_id_of_mig_device, {"nvmlDeviceGetGpuInstanceId"});
  Bind(lib, api.get_ci_id_of_mig_device, {"nvmlDeviceGetComputeInstanceId"});
  // _v3 and _v2 fill the same 24-byte struct; the unversioned call a 16-byte one, not bound.
  Bind(lib, api.get_compute_running_processes,
       {"nvmlDeviceGetComputeRunningProcesses_v3", "nvmlDeviceGetComputeRunningProcesses_v2"});
  Bind(lib, api.power_smoothing_activate_profile,
       {"nvmlDevicePowerSmoothingActivatePresetProfile"});
  Bind(lib, api.power_smoothing_update_profile,
       {"nvmlDevicePowerSmoothingUpdatePresetProfileParam"});
  Bind(lib, api.power_smoothing_set_state, {"nvmlDevicePowerSmoothingSetState"});
  return api;
}

core::Error NvmlApi::ErrorFor(nvmlReturn_t code, const std::string& what) const {
  const char* text = error_string != nullptr ? error_string(code) : nullptr;
  const char* name = ReturnCodeName(code);
  const std::string message =
      name != nullptr
          ? fmt::format("{}: {} (NVML_ERROR_{})", what, text != nullptr ? text : "unknown", name)
          : fmt::format("{}: {} (NVML error {})", what, text != nullptr ? text : "unknown", code);
  switch (code) {
    case kErrorNotSupported:
    case kErrorFunctionNotFound:
      return core::Error::Unimplemented(message);
    case kErrorNoPermission:
      return core::Error::PermissionDenied(message);
    case kErrorGpuIsLost:
      return core::Error::DataLoss(message);
    case kErrorDriverNotLoaded:
    case kErrorLibraryNotFound:
    case kErrorUninitialized:
      return core::Error::Unavailable(message);
    case kErrorInvalidArgument:
      return core::Error::InvalidArgument(message);
    case kErrorNotFound:
      return core::Error::NotFound(message);
    case kErrorInsufficientResources:
      return core::Error::ResourceExhausted(message);
    case kErrorInUse:
      return core::Error::FailedPrecondition(message);
    default:
      return core::Error::Internal(message);
  }
}

}  // namespace headroom::gpu::nvml
