#include "mig/layout.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/parse.h"

namespace headroom::mig {
namespace {

using core::Error;
using core::Fail;
using core::Result;
using core::Status;

// Compute-instance sizes NVML defines for these GPUs (NVML_COMPUTE_INSTANCE_PROFILE_{1,2,3,4,7}
// _SLICE; the 6- and 8-slice constants belong to other GPUs).
constexpr int kComputeInstanceSizes[] = {1, 2, 3, 4, 7};

Result<int> ParseCount(std::string_view text, std::string_view token, std::string_view what) {
  auto value = core::ParseInteger(text);
  if (!value || *value < 0 || *value > 64) {
    return Fail(Error::InvalidArgument(
        fmt::format("layout token '{}': {} '{}' is not a small whole number", token, what, text)));
  }
  return static_cast<int>(*value);
}

Result<std::vector<int>> ParseComputeInstances(std::string_view text, std::string_view token) {
  std::vector<int> sizes;
  for (std::string_view part : core::Split(text, '+')) {
    if (part.size() < 2 || part.back() != 'c') {
      return Fail(Error::InvalidArgument(fmt::format(
          "layout token '{}': compute instance '{}' is not of the form <n>c", token, part)));
    }
    HEADROOM_ASSIGN_OR_RETURN(
        int size, ParseCount(part.substr(0, part.size() - 1), token, "compute-instance size"));
    sizes.push_back(size);
  }
  return sizes;
}

Result<GpuInstance> ParseInstance(std::string_view token) {
  const size_t at = token.find('@');
  if (at == std::string_view::npos || at == 0) {
    return Fail(Error::InvalidArgument(
        fmt::format("layout token '{}' is not of the form <profile>@<start slot>", token)));
  }
  GpuInstance instance;
  instance.profile = std::string(token.substr(0, at));
  std::string_view rest = token.substr(at + 1);
  const size_t slash = rest.find('/');
  HEADROOM_ASSIGN_OR_RETURN(instance.start, ParseCount(rest.substr(0, slash), token, "start slot"));
  if (slash != std::string_view::npos) {
    HEADROOM_ASSIGN_OR_RETURN(instance.compute_instances,
                              ParseComputeInstances(rest.substr(slash + 1), token));
  }
  return instance;
}

std::string FormatInstance(const GpuInstance& instance) {
  std::string text = fmt::format("{}@{}", instance.profile, instance.start);
  for (size_t i = 0; i < instance.compute_instances.size(); ++i) {
    text += fmt::format("{}{}c", i == 0 ? "/" : "+", instance.compute_instances[i]);
  }
  return text;
}

Status CheckComputeInstances(const GpuInstance& instance, const GiProfile& profile) {
  std::vector<std::string> allowed;
  for (int size : kComputeInstanceSizes) {
    if (size <= profile.compute_slices) allowed.push_back(fmt::format("{}c", size));
  }
  int used = 0;
  for (int size : instance.compute_instances) {
    if (std::find(allowed.begin(), allowed.end(), fmt::format("{}c", size)) == allowed.end()) {
      return Fail(Error::InvalidArgument(fmt::format(
          "'{}': no {}c compute instance in a {}-slice GPU instance (allowed: {})",
          FormatInstance(instance), size, profile.compute_slices, fmt::join(allowed, ", "))));
    }
    used += size;
  }
  if (used > profile.compute_slices) {
    return Fail(Error::InvalidArgument(
        fmt::format("'{}': compute instances use {} compute slices, the GPU instance has {}",
                    FormatInstance(instance), used, profile.compute_slices)));
  }
  return core::Ok();
}

// The instance's profile, after checking its start slot and compute instances.
Result<const GiProfile*> CheckInstance(const GpuMigSpec& spec, const GpuInstance& instance) {
  const GiProfile* profile = spec.FindProfile(instance.profile);
  if (profile == nullptr) {
    std::string known;
    for (const GiProfile& p : spec.profiles) known += (known.empty() ? "" : ", ") + p.name;
    return Fail(Error::InvalidArgument(
        fmt::format("'{}': profile {} is not supported on {} (supported: {})",
                    FormatInstance(instance), instance.profile, spec.name, known)));
  }
  if (!profile->AllowsStart(instance.start)) {
    return Fail(Error::InvalidArgument(fmt::format(
        "'{}': {} cannot start at memory slice {} (allowed starts: {})", FormatInstance(instance),
        profile->name, instance.start, fmt::join(profile->starts, ", "))));
  }
  HEADROOM_RETURN_IF_ERROR(CheckComputeInstances(instance, *profile));
  return profile;
}

// "memory slices 4-7": the slices [start, start + size).
std::string SliceRange(int start, int size) {
  return size == 1 ? fmt::format("memory slice {}", start)
                   : fmt::format("memory slices {}-{}", start, start + size - 1);
}

}  // namespace

Result<Layout> ParseLayout(std::string_view text) {
  if (core::Trim(text).empty()) return Fail(Error::InvalidArgument("the layout is empty"));
  Layout layout;
  for (std::string_view token : core::Split(text, ',')) {
    token = core::Trim(token);
    if (token.empty()) {
      return Fail(Error::InvalidArgument(
          fmt::format("layout '{}' has an empty token (two commas, or one at an end)", text)));
    }
    HEADROOM_ASSIGN_OR_RETURN(GpuInstance instance, ParseInstance(token));
    layout.instances.push_back(std::move(instance));
  }
  return layout;
}

Layout Canonical(Layout layout) {
  for (GpuInstance& instance : layout.instances) {
    std::sort(instance.compute_instances.rbegin(), instance.compute_instances.rend());
  }
  std::sort(layout.instances.begin(), layout.instances.end(),
            [](const GpuInstance& a, const GpuInstance& b) {
              return std::tie(a.start, a.profile, a.compute_instances) <
                     std::tie(b.start, b.profile, b.compute_instances);
            });
  return layout;
}

std::string FormatLayout(const Layout& layout) {
  std::string text;
  for (const GpuInstance& instance : Canonical(layout).instances) {
    text += (text.empty() ? "" : ",") + FormatInstance(instance);
  }
  return text;
}

Status ValidateLayout(const GpuMigSpec& spec, const Layout& layout) {
  std::vector<const GiProfile*> profiles;
  for (const GpuInstance& instance : layout.instances) {
    HEADROOM_ASSIGN_OR_RETURN(const GiProfile* profile, CheckInstance(spec, instance));
    profiles.push_back(profile);
  }
  std::map<const GiProfile*, int> count;
  const GpuInstance* media = nullptr;
  for (size_t i = 0; i < layout.instances.size(); ++i) {
    const GiProfile& profile = *profiles[i];
    if (profile.media_extension) {
      if (media != nullptr) {
        return Fail(Error::InvalidArgument(fmt::format(
            "'{}': only one \"+me\" instance per GPU, and '{}' already holds the media engines",
            FormatInstance(layout.instances[i]), FormatInstance(*media))));
      }
      media = &layout.instances[i];
    }
    if (++count[&profile] > profile.max_instances) {
      return Fail(Error::InvalidArgument(
          fmt::format("'{}': more than {} instance{} of {}", FormatInstance(layout.instances[i]),
                      profile.max_instances, profile.max_instances == 1 ? "" : "s", profile.name)));
    }
  }
  for (size_t i = 0; i < layout.instances.size(); ++i) {
    const int a_end = layout.instances[i].start + profiles[i]->memory_slices;
    for (size_t j = 0; j < i; ++j) {
      const int b_end = layout.instances[j].start + profiles[j]->memory_slices;
      const int from = std::max(layout.instances[i].start, layout.instances[j].start);
      const int to = std::min(a_end, b_end);
      if (from < to) {
        return Fail(Error::InvalidArgument(
            fmt::format("'{}' overlaps '{}' on {}", FormatInstance(layout.instances[i]),
                        FormatInstance(layout.instances[j]), SliceRange(from, to - from))));
      }
    }
  }
  return core::Ok();
}

std::optional<Layout> UniformLayout(const GpuMigSpec& spec, std::string_view profile_class,
                                    int count) {
  const GiProfile* p = spec.FindProfileOrClass(profile_class);
  if (p == nullptr || p->max_instances < count) return std::nullopt;
  Layout layout;
  int next_free = 0;
  for (int start : p->starts) {
    if (static_cast<int>(layout.instances.size()) == count) break;
    if (start < next_free) continue;
    layout.instances.push_back(GpuInstance{.profile = p->name, .start = start});
    next_free = start + p->memory_slices;
  }
  if (static_cast<int>(layout.instances.size()) != count) return std::nullopt;
  if (!ValidateLayout(spec, layout)) return std::nullopt;
  return layout;
}

}  // namespace headroom::mig
