// A MIG layout: the GPU instances of one GPU with their placements (and compute instances), its
// canonical text form "3g.40gb@0,2g.20gb@4,1g.10gb@6" for the CLI and files, and validation
// against a GPU's profiles. Pure functions over values; thread-safe.
#ifndef HEADROOM_MIG_LAYOUT_H_
#define HEADROOM_MIG_LAYOUT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "mig/profile.h"

namespace headroom::mig {

// One GPU instance. Text: "<profile>@<start>", optionally followed by its compute instances,
// "/<n>c+<n>c..." ("3g.40gb@4/2c+1c").
struct GpuInstance {
  std::string profile = {};  // profile name, e.g. "3g.40gb"
  int start = 0;             // first memory slice of the placement
  // Compute slices of each compute instance; empty: one compute instance over the whole GI.
  std::vector<int> compute_instances = {};

  bool operator==(const GpuInstance&) const = default;
};

// GPU instances in any order; Canonical() sorts them by start slot.
struct Layout {
  std::vector<GpuInstance> instances = {};

  bool operator==(const Layout&) const = default;
};

// Parses the text form (tokens separated by commas, spaces around them ignored). Checks syntax
// only; errors (kInvalidArgument) quote the bad token. ValidateLayout checks the rules.
[[nodiscard]] core::Result<Layout> ParseLayout(std::string_view text);

// The canonical text form: instances by start slot (then name), compute instances largest first.
std::string FormatLayout(const Layout& layout);
Layout Canonical(Layout layout);

// Checks `layout` against the GPU's rules, in this order, and returns the first violation
// (kInvalidArgument naming the instance): a profile the GPU lacks; a start slot the profile does
// not allow; compute instances of a size NVML lacks (1, 2, 3, 4 or 7 slices) or that exceed the
// GI; more than one "+me" instance; more instances of a profile than its max_instances; two
// placements sharing a memory slice.
[[nodiscard]] core::Status ValidateLayout(const GpuMigSpec& spec, const Layout& layout);

// `count` instances of one profile (name or class, e.g. "3g") at the earliest start slots that
// do not overlap, or nullopt when they do not all fit or break a rule.
std::optional<Layout> UniformLayout(const GpuMigSpec& spec, std::string_view profile_class,
                                    int count);

}  // namespace headroom::mig

#endif  // HEADROOM_MIG_LAYOUT_H_
