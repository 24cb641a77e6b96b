// Enumeration of the maximal MIG layouts of a GPU: every set of GPU instances (placements) that
// ValidateLayout accepts and to which no further instance of the chosen profiles can be added;
// and the selection of layouts to sweep from it (profiles by name, one layout per multiset, the
// equal-instance layouts, layouts given as text). Pure; thread-safe.
#ifndef HEADROOM_MIG_ENUMERATE_H_
#define HEADROOM_MIG_ENUMERATE_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "mig/layout.h"
#include "mig/profile.h"

namespace headroom::mig {

// All maximal layouts built from `profiles`, each canonical (one compute instance per GPU
// instance), sorted by their text form. Two layouts differ when their placements differ, so the
// same multiset of profiles at other start slots counts again ("19 maximal placements" on A100
// with 1g, 2g, 3g, 4g, 7g; ../shared/brief/mig.md).
// REQUIRES: every pointer in `profiles` points into spec.profiles, without repeats.
std::vector<Layout> EnumerateMaximalLayouts(const GpuMigSpec& spec,
                                            std::span<const GiProfile* const> profiles);

// How many distinct multisets of profiles (placements ignored) `layouts` hold ("14 distinct
// multisets" for the 19 layouts above).
int CountDistinctMultisets(std::span<const Layout> layouts);

// One layout per distinct multiset of profiles, the first of `layouts` holding it; ordered by
// instance count (fewest first), then by the sorted profile names.
std::vector<Layout> OnePerMultiset(std::span<const Layout> layouts);

// The profiles named in `text`, comma-separated classes ("1g,2g") or full names, each once;
// kInvalidArgument naming an unknown or repeated one (the message lists the known classes).
[[nodiscard]] core::Result<std::vector<const GiProfile*>> ProfilesNamed(const GpuMigSpec& spec,
                                                                        std::string_view text);

// The layouts of N equal instances the GPU has, with N: 7g x1, 3g x2, 2g x3, 1g x7, in that
// order (how throughput and energy scale with the number of instances).
std::vector<std::pair<int, Layout>> EqualInstanceLayouts(const GpuMigSpec& spec);

// Each of `texts` parsed and validated against `spec`, in order; the first error.
[[nodiscard]] core::Result<std::vector<Layout>> ParseValidLayouts(
    const GpuMigSpec& spec, std::span<const std::string> texts);

// The layouts a characterization sweeps: MIG off (nullopt) first, then `given` (ParseValidLayouts)
// when it is not empty, else one per multiset of the maximal layouts of the `profiles` classes
// (ProfilesNamed); the first error of whichever was used.
[[nodiscard]] core::Result<std::vector<std::optional<Layout>>> SweepLayouts(
    const GpuMigSpec& spec, std::span<const std::string> given, std::string_view profiles);

}  // namespace headroom::mig

#endif  // HEADROOM_MIG_ENUMERATE_H_
