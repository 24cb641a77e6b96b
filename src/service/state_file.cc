#include "service/state_file.h"

#include <algorithm>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "format/json_fields.h"
#include "gpu/control_restorer.h"

namespace headroom::service {
namespace {

using nlohmann::json;

constexpr int kStateFileVersion = 1;

// The whole file: its format's version, then one entry per GPU.
struct StateFile {
  int version = kStateFileVersion;
  std::vector<OriginalSettings> gpus = {};
};

constexpr auto kClockLockFields = std::tuple{format::Field("min_mhz", &gpu::ClockLock::min),
                                             format::Field("max_mhz", &gpu::ClockLock::max)};
constexpr auto kSmoothingProfileFields = std::tuple{
    format::Field("floor_percent", &gpu::PowerSmoothingProfile::floor_percent),
    format::Field("ramp_up_w_per_s", &gpu::PowerSmoothingProfile::ramp_up_w_per_s),
    format::Field("ramp_down_w_per_s", &gpu::PowerSmoothingProfile::ramp_down_w_per_s),
    format::Field("ramp_down_hysteresis_ms", &gpu::PowerSmoothingProfile::ramp_down_hysteresis_ms)};
constexpr auto kSmoothingFields = std::tuple{
    format::Field("enabled", &gpu::SmoothingSettings::enabled),
    format::Field("active_profile", &gpu::SmoothingSettings::active_profile),
    format::Field("profiles", &gpu::SmoothingSettings::profiles, kSmoothingProfileFields)};
constexpr auto kOriginalSettingsFields =
    std::tuple{format::Field("index", &OriginalSettings::index, {.is_signed = true}),
               format::Field("uuid", &OriginalSettings::uuid),
               format::Field("power_limit_w", &OriginalSettings::power_limit),
               format::Field("sm_clock_lock", &OriginalSettings::lock, kClockLockFields),
               // Files of agents from before power smoothing lack it.
               format::Field("power_smoothing", &OriginalSettings::power_smoothing,
                             kSmoothingFields, {.omit_empty = true})};
constexpr auto kStateVersionFields =
    std::tuple{format::Field("version", &StateFile::version, {.is_signed = true})};
constexpr auto kStateFileFields =
    std::tuple_cat(kStateVersionFields,
                   std::tuple{format::Field("gpus", &StateFile::gpus, kOriginalSettingsFields)});

}  // namespace

core::Result<std::vector<OriginalSettings>> ReadOriginals(
    const std::vector<gpu::Device*>& devices) {
  std::vector<OriginalSettings> out;
  for (gpu::Device* d : devices) {
    HEADROOM_ASSIGN_OR_RETURN(gpu::ControlSettings settings, gpu::ReadControls(*d));
    out.push_back(OriginalSettings{.index = d->info().index,
                                   .uuid = d->info().uuid,
                                   .power_limit = settings.power_limit,
                                   .lock = settings.lock,
                                   .power_smoothing = settings.smoothing});
  }
  return out;
}

std::string OriginalsToJson(const std::vector<OriginalSettings>& originals) {
  json j = json::object();
  format::WriteFields(j, StateFile{.gpus = originals}, kStateFileFields);
  return j.dump(2) + "\n";
}

core::Result<std::vector<OriginalSettings>> OriginalsFromJson(const std::string& text) {
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return core::Fail(core::Error::InvalidArgument("bad state file: not a JSON object"));
  }
  format::FieldReader r("bad state file", "headroom agent");
  StateFile file;
  format::ReadFields(r, j, "", file, kStateVersionFields);
  if (!r.error() && file.version != kStateFileVersion) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("unsupported state file version {}", file.version)));
  }
  format::ReadFields(r, j, "", file, kStateFileFields);
  if (r.error()) return core::Fail(*r.error());
  return file.gpus;
}

core::Result<std::vector<std::string>> RestoreOriginals(
    const std::vector<gpu::Device*>& devices, const std::vector<OriginalSettings>& originals) {
  std::optional<core::Error> first;
  auto keep = [&first](core::Status st) {
    if (!st && !first) first = st.error();
  };
  std::vector<std::string> lines;
  for (const OriginalSettings& o : originals) {
    auto it = std::find_if(devices.begin(), devices.end(),
                           [&](gpu::Device* d) { return d->info().index == o.index; });
    if (it == devices.end() || (*it)->info().uuid != o.uuid) {
      keep(core::Fail(core::Error::FailedPrecondition(
          fmt::format("GPU {} ({}) is not on this node; not restored", o.index, o.uuid))));
      continue;
    }
    const gpu::ControlSettings settings{
        .power_limit = o.power_limit, .lock = o.lock, .smoothing = o.power_smoothing};
    keep(gpu::RestoreControls(**it, settings));
    lines.push_back(fmt::format("GPU {}: {}", o.index, gpu::DescribeControls(settings)));
  }
  if (first) return core::Fail(*first);
  return lines;
}

}  // namespace headroom::service
