#include "fake_mig_state.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include <fmt/format.h>

#include "core/parse.h"
#include "mig/apply_plan.h"
#include "mig/layout.h"

namespace headroom::fake_nvml {

using core::Error;
using core::Fail;

core::Result<std::vector<gpu::GpuProcess>> ParseProcesses(const std::string& text) {
  constexpr std::uint64_t kUsedBytes = 512ULL << 20;
  std::vector<gpu::GpuProcess> out;
  for (std::string_view item : core::Split(text, ',')) {
    item = core::Trim(item);
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    auto pid = core::ParseInteger(item.substr(0, colon));
    if (!pid || *pid <= 0) {
      return Fail(Error::InvalidArgument(fmt::format("process '{}': bad pid", item)));
    }
    gpu::GpuProcess process{.pid = static_cast<std::uint32_t>(*pid),
                            .used_memory_bytes = kUsedBytes};
    if (colon != std::string_view::npos) {
      auto gi = core::ParseInteger(item.substr(colon + 1));
      if (!gi) return Fail(Error::InvalidArgument(fmt::format("process '{}': bad GI id", item)));
      process.gpu_instance_id = static_cast<int>(*gi);
    }
    out.push_back(process);
  }
  return out;
}

namespace {

// Sets `field` of `profile` to `value` (see PerturbProfiles).
core::Status Perturb(std::string_view field, std::string_view value, mig::GiProfile* profile) {
  if (field == "starts") {
    profile->starts.clear();
    for (std::string_view start : core::Split(value, '/')) {
      auto n = core::ParseInteger(start);
      if (!n) return Fail(Error::InvalidArgument(fmt::format("bad start '{}'", start)));
      profile->starts.push_back(static_cast<int>(*n));
    }
    return core::Ok();
  }
  auto n = core::ParseInteger(value);
  if (!n || *n < 0) return Fail(Error::InvalidArgument(fmt::format("bad number '{}'", value)));
  const int v = static_cast<int>(*n);
  if (field == "memory_mib") {
    profile->memory_gib = static_cast<double>(*n) / 1024.0;
    return core::Ok();
  }
  const std::map<std::string_view, int*> fields = {{"sms", &profile->sm_count},
                                                   {"slices", &profile->compute_slices},
                                                   {"instances", &profile->max_instances},
                                                   {"copy", &profile->engines.copy},
                                                   {"decoders", &profile->engines.decoders},
                                                   {"encoders", &profile->engines.encoders},
                                                   {"jpeg", &profile->engines.jpeg},
                                                   {"ofa", &profile->engines.ofa}};
  auto it = fields.find(field);
  if (it == fields.end()) return Fail(Error::InvalidArgument(fmt::format("no field '{}'", field)));
  *it->second = v;
  return core::Ok();
}

}  // namespace

core::Status PerturbProfiles(const std::string& text, mig::GpuMigSpec* spec) {
  for (std::string_view item : core::Split(text, ',')) {
    item = core::Trim(item);
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    auto id = core::ParseInteger(item.substr(0, colon));
    auto profile = std::find_if(spec->profiles.begin(), spec->profiles.end(),
                                [&id](const mig::GiProfile& p) { return id && p.id == *id; });
    if (colon == std::string_view::npos || profile == spec->profiles.end()) {
      return Fail(Error::InvalidArgument(
          fmt::format("MIG perturbation '{}': want <profile id>:<field>=<value>", item)));
    }
    const std::string_view change = item.substr(colon + 1);
    if (change == "absent") {
      spec->profiles.erase(profile);
      continue;
    }
    const size_t eq = change.find('=');
    if (eq == std::string_view::npos) {
      return Fail(Error::InvalidArgument(fmt::format("MIG perturbation '{}': no '='", item)));
    }
    if (auto done = Perturb(change.substr(0, eq), change.substr(eq + 1), &*profile); !done) {
      return Fail(done.error().WithContext(fmt::format("MIG perturbation '{}'", item)));
    }
  }
  return core::Ok();
}

core::Result<std::vector<gpu::MigGpuInstance>> InstancesOf(const mig::GpuMigSpec& spec,
                                                           const std::string& layout) {
  HEADROOM_ASSIGN_OR_RETURN(mig::Layout parsed, mig::ParseLayout(layout));
  HEADROOM_ASSIGN_OR_RETURN(mig::ApplyPlan plan, mig::PlanApply(spec, {}, parsed));
  std::vector<gpu::MigGpuInstance> out;
  for (const mig::ApplyStep& step : plan.steps) {
    if (step.kind == mig::ApplyStep::Kind::kCreateGpuInstance) {
      out.push_back({.id = static_cast<int>(out.size()) + 1,
                     .profile_id = step.profile_id,
                     .start = step.start});
    } else if (step.kind == mig::ApplyStep::Kind::kCreateComputeInstance) {
      for (gpu::MigGpuInstance& gi : out) {
        if (gi.start != step.start) continue;
        gi.compute_instances.push_back({.id = static_cast<int>(gi.compute_instances.size()),
                                        .compute_slices = step.compute_slices});
      }
    }
  }
  return out;
}

core::Status SaveMigState(const std::string& path,
                          const std::vector<std::unique_ptr<gpu::sim::SimDevice>>& devices) {
  std::string text = "# headroom fake NVML MIG state\n";
  for (const auto& device : devices) {
    auto mode = device->MigMode();
    if (!mode) continue;  // a GPU without MIG
    text += fmt::format("gpu {} mig {}\n", device->info().index, mode->current ? 1 : 0);
    auto instances = device->MigInstances();
    if (!instances) continue;
    for (const gpu::MigGpuInstance& gi : *instances) {
      text += fmt::format("gi {} {} {} {}", device->info().index, gi.id, gi.profile_id, gi.start);
      for (const gpu::MigComputeInstance& ci : gi.compute_instances) {
        text += fmt::format(" {}:{}", ci.id, ci.compute_slices);
      }
      text += "\n";
    }
  }
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    if (!out) return Fail(Error::Unavailable("cannot write " + temporary));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    return Fail(Error::Unavailable("cannot rename " + temporary + " to " + path));
  }
  return core::Ok();
}

core::Result<bool> LoadMigState(const std::string& path,
                                const std::vector<std::unique_ptr<gpu::sim::SimDevice>>& devices) {
  std::ifstream in(path);
  if (!in) return false;
  std::map<int, bool> enabled;
  std::map<int, std::vector<gpu::MigGpuInstance>> instances;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string kind;
    if (!(words >> kind) || kind.starts_with("#")) continue;
    int gpu = 0;
    if (kind == "gpu") {
      std::string mig;
      int on = 0;
      if (!(words >> gpu >> mig >> on)) break;
      enabled[gpu] = on != 0;
      instances[gpu];
      continue;
    }
    gpu::MigGpuInstance gi;
    if (kind != "gi" || !(words >> gpu >> gi.id >> gi.profile_id >> gi.start)) {
      return Fail(Error::InvalidArgument(fmt::format("{}: bad line '{}'", path, line)));
    }
    std::string ci;
    while (words >> ci) {
      const size_t colon = ci.find(':');
      auto id = core::ParseInteger(std::string_view(ci).substr(0, colon));
      auto slices = core::ParseInteger(
          std::string_view(ci).substr(colon == std::string::npos ? ci.size() : colon + 1));
      if (!id || !slices) {
        return Fail(Error::InvalidArgument(fmt::format("{}: bad compute instance '{}'", path, ci)));
      }
      gi.compute_instances.push_back(
          {.id = static_cast<int>(*id), .compute_slices = static_cast<int>(*slices)});
    }
    instances[gpu].push_back(std::move(gi));
  }
  if (enabled.empty()) return false;
  for (const auto& device : devices) {
    const int index = device->info().index;
    if (!enabled.contains(index)) continue;
    HEADROOM_RETURN_IF_ERROR(device->RestoreMig(enabled[index], instances[index]));
  }
  return true;
}

}  // namespace headroom::fake_nvml
