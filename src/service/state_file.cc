#include "service/state_file.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "gpu/control_restorer.h"

namespace headroom::service {
namespace {

using nlohmann::json;

constexpr int kStateFileVersion = 1;

}  // namespace

core::Result<std::vector<OriginalSettings>> ReadOriginals(
    const std::vector<gpu::Device*>& devices) {
  std::vector<OriginalSettings> out;
  for (gpu::Device* d : devices) {
    HEADROOM_ASSIGN_OR_RETURN(gpu::ControlSettings settings, gpu::ReadControls(*d));
    out.push_back(OriginalSettings{.index = d->info().index,
                                   .uuid = d->info().uuid,
                                   .power_limit = settings.power_limit,
                                   .lock = settings.lock});
  }
  return out;
}

std::string OriginalsToJson(const std::vector<OriginalSettings>& originals) {
  json gpus = json::array();
  for (const OriginalSettings& o : originals) {
    json g = {{"index", o.index}, {"uuid", o.uuid}, {"power_limit_w", o.power_limit.value()}};
    g["sm_clock_lock"] =
        o.lock ? json{{"min_mhz", o.lock->min.value()}, {"max_mhz", o.lock->max.value()}}
               : json(nullptr);
    gpus.push_back(std::move(g));
  }
  return json{{"version", kStateFileVersion}, {"gpus", std::move(gpus)}}.dump(2) + "\n";
}

namespace {

// nlohmann's get<int>() casts any number, 1e300 included (undefined behaviour): a whole number
// in int's range, or a json::out_of_range naming the field.
int IntegerField(const json& obj, const char* key) {
  const json& v = obj.at(key);
  if (v.is_number_integer() && v.get<std::int64_t>() >= std::numeric_limits<int>::min() &&
      v.get<std::int64_t>() <= std::numeric_limits<int>::max()) {
    return static_cast<int>(v.get<std::int64_t>());
  }
  throw json::out_of_range::create(
      406, fmt::format("'{}' is {}, not a whole number in int's range", key, v.dump()), &v);
}

}  // namespace

core::Result<std::vector<OriginalSettings>> OriginalsFromJson(const std::string& text) {
  try {
    const json j = json::parse(text);
    if (IntegerField(j, "version") != kStateFileVersion) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("unsupported state file version {}", j.at("version").dump())));
    }
    std::vector<OriginalSettings> out;
    for (const json& g : j.at("gpus")) {
      OriginalSettings o;
      o.index = IntegerField(g, "index");
      o.uuid = g.at("uuid").get<std::string>();
      o.power_limit = core::Watts(g.at("power_limit_w").get<double>());
      const json& lock = g.at("sm_clock_lock");
      if (!lock.is_null()) {
        o.lock = gpu::ClockLock{core::Megahertz(lock.at("min_mhz").get<double>()),
                                core::Megahertz(lock.at("max_mhz").get<double>())};
      }
      out.push_back(std::move(o));
    }
    return out;
  } catch (const json::exception& e) {
    return core::Fail(core::Error::InvalidArgument(fmt::format("bad state file: {}", e.what())));
  }
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
    const gpu::ControlSettings settings{o.power_limit, o.lock};
    keep(gpu::RestoreControls(**it, settings));
    lines.push_back(fmt::format("GPU {}: {}", o.index, gpu::DescribeControls(settings)));
  }
  if (first) return core::Fail(*first);
  return lines;
}

}  // namespace headroom::service
