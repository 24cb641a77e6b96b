#include "mig/profile.h"

#include <algorithm>
#include <array>
#include <utility>

#include "core/parse.h"

namespace headroom::mig {

bool GiProfile::AllowsStart(int start) const {
  return std::find(starts.begin(), starts.end(), start) != starts.end();
}

const GiProfile* GpuMigSpec::FindProfile(std::string_view name) const {
  const std::string key = core::ToLower(name);
  for (const GiProfile& profile : profiles) {
    if (core::ToLower(profile.name) == key) return &profile;
  }
  return nullptr;
}

const GiProfile* GpuMigSpec::FindProfileById(int id) const {
  for (const GiProfile& profile : profiles) {
    if (profile.id == id) return &profile;
  }
  return nullptr;
}

const GiProfile* GpuMigSpec::FindProfileOrClass(std::string_view name) const {
  if (const GiProfile* profile = FindProfile(name)) return profile;
  const std::string key = core::ToLower(name);
  for (const GiProfile& profile : profiles) {
    if (core::ToLower(profile.short_name) == key) return &profile;
  }
  return nullptr;
}

std::optional<int> NvmlGpuInstanceProfileValue(std::string_view nvml_enum) {
  // NVML_GPU_INSTANCE_PROFILE_* in nvml.h (../shared/brief/mig.md).
  static constexpr std::array<std::pair<std::string_view, int>, 10> kValues = {{
      {"GPU_INSTANCE_PROFILE_1_SLICE", 0x0},
      {"GPU_INSTANCE_PROFILE_2_SLICE", 0x1},
      {"GPU_INSTANCE_PROFILE_3_SLICE", 0x2},
      {"GPU_INSTANCE_PROFILE_4_SLICE", 0x3},
      {"GPU_INSTANCE_PROFILE_7_SLICE", 0x4},
      {"GPU_INSTANCE_PROFILE_8_SLICE", 0x5},
      {"GPU_INSTANCE_PROFILE_6_SLICE", 0x6},
      {"GPU_INSTANCE_PROFILE_1_SLICE_REV1", 0x7},
      {"GPU_INSTANCE_PROFILE_2_SLICE_REV1", 0x8},
      {"GPU_INSTANCE_PROFILE_1_SLICE_REV2", 0x9},
  }};
  for (const auto& [name, value] : kValues) {
    if (name == nvml_enum) return value;
  }
  return std::nullopt;
}

}  // namespace headroom::mig
