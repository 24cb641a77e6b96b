// NvmlDevice's power smoothing (Blackwell and later): the state read through the
// NVML_FI_PWR_SMOOTHING_* field values, set through nvmlDevicePowerSmoothing*. The fields give
// ramp rates in mW/s; the setters take W/s (NVML's reference for UpdatePresetProfileParam).
#include <array>
#include <vector>

#include <fmt/format.h>

#include "gpu/nvml/nvml_device.h"

namespace headroom::gpu::nvml {
namespace {

// A field value as a number, whichever member the driver filled (the header leaves the type of
// the smoothing fields to the driver).
double SmoothingFieldNumber(const nvmlFieldValue_t& v) {
  switch (v.valueType) {
    case kValueTypeDouble:
      return v.value.dVal;
    case kValueTypeUnsignedLong:
      return static_cast<double>(v.value.ulVal);
    case kValueTypeUnsignedLongLong:
      return static_cast<double>(v.value.ullVal);
    case kValueTypeSignedLongLong:
      return static_cast<double>(v.value.sllVal);
    case kValueTypeSignedInt:
      return v.value.siVal;
    case kValueTypeUnsignedShort:
      return v.value.usVal;
    default:
      return v.value.uiVal;
  }
}

nvmlFieldValue_t SmoothingField(unsigned int id, unsigned int scope = 0) {
  nvmlFieldValue_t v{};
  v.fieldId = id;
  v.scopeId = scope;
  return v;
}

}  // namespace

core::Status NvmlDevice::ReadFields(std::vector<nvmlFieldValue_t>* fields, const char* what) const {
  HEADROOM_RETURN_IF_ERROR(Require(reinterpret_cast<const void*>(api_.get_field_values), what));
  HEADROOM_RETURN_IF_ERROR(Check(
      api_.get_field_values(handle_, static_cast<int>(fields->size()), fields->data()), what));
  for (const nvmlFieldValue_t& v : *fields) {
    HEADROOM_RETURN_IF_ERROR(Check(v.nvmlReturn, fmt::format("{} (field {})", what, v.fieldId)));
  }
  return core::Ok();
}

core::Result<std::vector<PowerSmoothingProfile>> NvmlDevice::PowerSmoothingProfiles(
    unsigned int count) const {
  std::vector<nvmlFieldValue_t> fields;
  for (unsigned int p = 0; p < count; ++p) {
    for (unsigned int id :
         {kFieldPowerSmoothingProfileFloor, kFieldPowerSmoothingProfileRampUp,
          kFieldPowerSmoothingProfileRampDown, kFieldPowerSmoothingProfileHysteresis}) {
      fields.push_back(SmoothingField(id, p));
    }
  }
  HEADROOM_RETURN_IF_ERROR(ReadFields(&fields, "power-smoothing profiles"));
  std::vector<PowerSmoothingProfile> profiles;
  for (unsigned int p = 0; p < count; ++p) {
    const nvmlFieldValue_t* f = &fields[4 * p];
    profiles.push_back({.floor_percent = SmoothingFieldNumber(f[0]),
                        .ramp_up_w_per_s = SmoothingFieldNumber(f[1]) / 1000.0,
                        .ramp_down_w_per_s = SmoothingFieldNumber(f[2]) / 1000.0,
                        .ramp_down_hysteresis_ms = SmoothingFieldNumber(f[3])});
  }
  return profiles;
}

core::Result<PowerSmoothingState> NvmlDevice::PowerSmoothing() {
  // The feature's own fields first: a GPU or driver without it answers NOT_SUPPORTED in them.
  std::vector<nvmlFieldValue_t> fields = {SmoothingField(kFieldPowerSmoothingEnabled),
                                          SmoothingField(kFieldPowerSmoothingActiveProfile),
                                          SmoothingField(kFieldPowerSmoothingPresetCount)};
  HEADROOM_RETURN_IF_ERROR(ReadFields(&fields, "power smoothing (Blackwell and later)"));
  PowerSmoothingState state;
  state.enabled = SmoothingFieldNumber(fields[0]) != 0;
  state.active_profile = static_cast<int>(SmoothingFieldNumber(fields[1]));
  const auto count = static_cast<unsigned int>(SmoothingFieldNumber(fields[2]));
  // More than NVML's maximum would be a driver bug; read no further than its maximum.
  HEADROOM_ASSIGN_OR_RETURN(state.profiles,
                            PowerSmoothingProfiles(std::min(count, kPowerSmoothingMaxProfiles)));
  // Informational: left out where the driver does not give them.
  std::vector<nvmlFieldValue_t> extra = {SmoothingField(kFieldPowerSmoothingAppliedFloor)};
  if (ReadFields(&extra, "applied power-smoothing floor")) {
    state.applied_floor = core::Watts(SmoothingFieldNumber(extra[0]));
  }
  extra = {SmoothingField(kFieldPowerSmoothingLifetimeRemaining)};
  if (ReadFields(&extra, "power-smoothing lifetime")) {
    state.lifetime_remaining_percent = SmoothingFieldNumber(extra[0]);
  }
  return state;
}

core::Status NvmlDevice::SetPowerSmoothingEnabled(bool enabled) {
  HEADROOM_RETURN_IF_ERROR(Require(reinterpret_cast<const void*>(api_.power_smoothing_set_state),
                                   "set power smoothing"));
  nvmlPowerSmoothingState_t state{.version = kPowerSmoothingStateV1, .state = enabled ? 1U : 0U};
  return Check(api_.power_smoothing_set_state(handle_, &state),
               enabled ? "enable power smoothing" : "disable power smoothing");
}

core::Status NvmlDevice::ActivatePowerSmoothingProfile(int profile) {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.power_smoothing_activate_profile),
              "activate power-smoothing profile"));
  if (profile < 0) {
    return core::Fail(core::Error::OutOfRange(
        fmt::format("GPU {}: power-smoothing profile {} is negative", info_.index, profile)));
  }
  nvmlPowerSmoothingProfile_t p{.version = kPowerSmoothingProfileV1,
                                .profileId = static_cast<unsigned int>(profile),
                                .paramId = 0,
                                .value = 0};
  return Check(api_.power_smoothing_activate_profile(handle_, &p),
               fmt::format("activate power-smoothing profile {}", profile));
}

core::Status NvmlDevice::UpdatePowerSmoothingProfile(int profile,
                                                     const PowerSmoothingUpdate& update) {
  HEADROOM_RETURN_IF_ERROR(
      Require(reinterpret_cast<const void*>(api_.power_smoothing_update_profile),
              "update power-smoothing profile"));
  if (profile < 0) {
    return core::Fail(core::Error::OutOfRange(
        fmt::format("GPU {}: power-smoothing profile {} is negative", info_.index, profile)));
  }
  // One call per parameter: NVML sets one at a time.
  const std::array<std::pair<unsigned int, std::optional<double>>, 4> params = {{
      {kPowerSmoothingParamFloor, update.floor_percent},
      {kPowerSmoothingParamRampUp, update.ramp_up_w_per_s},
      {kPowerSmoothingParamRampDown, update.ramp_down_w_per_s},
      {kPowerSmoothingParamHysteresis, update.ramp_down_hysteresis_ms},
  }};
  for (const auto& [param, value] : params) {
    if (!value) continue;
    nvmlPowerSmoothingProfile_t p{.version = kPowerSmoothingProfileV1,
                                  .profileId = static_cast<unsigned int>(profile),
                                  .paramId = param,
                                  .value = *value};
    HEADROOM_RETURN_IF_ERROR(Check(
        api_.power_smoothing_update_profile(handle_, &p),
        fmt::format("set power-smoothing profile {} parameter {} to {}", profile, param, *value)));
  }
  return core::Ok();
}

}  // namespace headroom::gpu::nvml
