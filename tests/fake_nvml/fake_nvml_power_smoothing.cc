// The fake NVML's power smoothing (see fake_nvml.cc: HEADROOM_FAKE_NVML_POWER_SMOOTHING=1 gives
// every GPU the feature): the NVML_FI_PWR_SMOOTHING_* fields and the three setters, over the
// SimDevice's state, in NVML's units (ramp rates in mW/s in the fields, W/s in the setters).
// The legacy (11.x-era) build exports none of it. Test-only.
#include <cmath>
#include <string>

#include <fmt/format.h>

#include "fake_state.h"

namespace headroom::fake_nvml {
namespace {

void SetUint(nvml::nvmlFieldValue_t& v, double x) {
  v.valueType = nvml::kValueTypeUnsignedInt;
  v.value.uiVal = static_cast<unsigned int>(std::lround(x));
}

// Doubles where a percentage may have a fraction, as a driver may give them.
void SetDouble(nvml::nvmlFieldValue_t& v, double x) {
  v.valueType = nvml::kValueTypeDouble;
  v.value.dVal = x;
}

// One PROFILE_* field: the preset chosen by scopeId.
nvmlReturn_t ProfileField(const gpu::PowerSmoothingState& state, nvml::nvmlFieldValue_t& v) {
  if (v.scopeId >= state.profiles.size()) return nvml::kErrorInvalidArgument;
  const gpu::PowerSmoothingProfile& p = state.profiles[v.scopeId];
  switch (v.fieldId) {
    case nvml::kFieldPowerSmoothingProfileFloor:
      SetDouble(v, p.floor_percent);
      break;
    case nvml::kFieldPowerSmoothingProfileRampUp:
      SetUint(v, p.ramp_up_w_per_s * 1000.0);
      break;
    case nvml::kFieldPowerSmoothingProfileRampDown:
      SetUint(v, p.ramp_down_w_per_s * 1000.0);
      break;
    default:
      SetUint(v, p.ramp_down_hysteresis_ms);
      break;
  }
  return nvml::kSuccess;
}

}  // namespace

bool IsPowerSmoothingField(unsigned int field_id) { return field_id >= 256 && field_id <= 270; }

nvmlReturn_t PowerSmoothingField(SimDevice& device, nvml::nvmlFieldValue_t& v) {
  auto state = device.PowerSmoothing();
  if (!state) return ReturnFor(state.error());
  switch (v.fieldId) {
    case nvml::kFieldPowerSmoothingEnabled:
      SetUint(v, state->enabled ? 1 : 0);
      return nvml::kSuccess;
    case nvml::kFieldPowerSmoothingActiveProfile:
      SetUint(v, state->active_profile);
      return nvml::kSuccess;
    case nvml::kFieldPowerSmoothingPresetCount:
      SetUint(v, static_cast<double>(state->profiles.size()));
      return nvml::kSuccess;
    case nvml::kFieldPowerSmoothingAppliedFloor:
      SetUint(v, state->applied_floor.value_or(core::Watts(0)).value());
      return nvml::kSuccess;
    case nvml::kFieldPowerSmoothingLifetimeRemaining:
      SetDouble(v, state->lifetime_remaining_percent.value_or(100));
      return nvml::kSuccess;
    case nvml::kFieldPowerSmoothingProfileFloor:
    case nvml::kFieldPowerSmoothingProfileRampUp:
    case nvml::kFieldPowerSmoothingProfileRampDown:
    case nvml::kFieldPowerSmoothingProfileHysteresis:
      return ProfileField(*state, v);
    default:
      return nvml::kErrorNotSupported;  // the fields headroom does not read
  }
}

#ifndef HEADROOM_FAKE_NVML_LEGACY
namespace {

// The device a profile call names, after the checks the driver makes of its arguments.
// REQUIRES: g_mu held.
nvmlReturn_t ProfileDevice(nvmlDevice_t handle, const nvml::nvmlPowerSmoothingProfile_t* profile,
                           SimDevice** device) {
  if (nvmlReturn_t rc = Lookup(handle, device); rc != nvml::kSuccess) return rc;
  if (profile == nullptr) return nvml::kErrorInvalidArgument;
  if (profile->version != nvml::kPowerSmoothingProfileV1) {
    return nvml::kErrorArgumentVersionMismatch;
  }
  return nvml::kSuccess;
}

}  // namespace

FAKE_EXPORT nvmlReturn_t nvmlDevicePowerSmoothingSetState(nvmlDevice_t handle,
                                                          nvml::nvmlPowerSmoothingState_t* state) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = Lookup(handle, &device); rc != nvml::kSuccess) return rc;
  if (state == nullptr) return nvml::kErrorInvalidArgument;
  if (state->version != nvml::kPowerSmoothingStateV1) return nvml::kErrorArgumentVersionMismatch;
  if (state->state > 1) return nvml::kErrorInvalidArgument;
  auto st = device->SetPowerSmoothingEnabled(state->state == 1);
  if (st) LogSetting(*device, fmt::format("smoothing-state {}", state->state));
  return st ? nvml::kSuccess : ReturnFor(st.error());
}

FAKE_EXPORT nvmlReturn_t nvmlDevicePowerSmoothingActivatePresetProfile(
    nvmlDevice_t handle, nvml::nvmlPowerSmoothingProfile_t* profile) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = ProfileDevice(handle, profile, &device); rc != nvml::kSuccess) return rc;
  auto st = device->ActivatePowerSmoothingProfile(static_cast<int>(profile->profileId));
  if (st) LogSetting(*device, fmt::format("smoothing-profile {}", profile->profileId));
  return st ? nvml::kSuccess : ReturnFor(st.error());
}

FAKE_EXPORT nvmlReturn_t nvmlDevicePowerSmoothingUpdatePresetProfileParam(
    nvmlDevice_t handle, nvml::nvmlPowerSmoothingProfile_t* profile) {
  std::lock_guard lock(g_mu);
  SimDevice* device = nullptr;
  if (nvmlReturn_t rc = ProfileDevice(handle, profile, &device); rc != nvml::kSuccess) return rc;
  gpu::PowerSmoothingUpdate update;
  switch (profile->paramId) {
    case nvml::kPowerSmoothingParamFloor:
      update.floor_percent = profile->value;
      break;
    case nvml::kPowerSmoothingParamRampUp:
      update.ramp_up_w_per_s = profile->value;
      break;
    case nvml::kPowerSmoothingParamRampDown:
      update.ramp_down_w_per_s = profile->value;
      break;
    case nvml::kPowerSmoothingParamHysteresis:
      update.ramp_down_hysteresis_ms = profile->value;
      break;
    default:
      return nvml::kErrorInvalidArgument;
  }
  auto st = device->UpdatePowerSmoothingProfile(static_cast<int>(profile->profileId), update);
  if (st) {
    LogSetting(*device, fmt::format("smoothing-param {} {} {}", profile->profileId,
                                    profile->paramId, profile->value));
  }
  return st ? nvml::kSuccess : ReturnFor(st.error());
}
#endif

}  // namespace headroom::fake_nvml
