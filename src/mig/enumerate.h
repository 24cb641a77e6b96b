// Enumeration of the maximal MIG layouts of a GPU: every set of GPU instances (placements) that
// ValidateLayout accepts and to which no further instance of the chosen profiles can be added.
// Pure; thread-safe.
#ifndef HEADROOM_MIG_ENUMERATE_H_
#define HEADROOM_MIG_ENUMERATE_H_

#include <span>
#include <vector>

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

}  // namespace headroom::mig

#endif  // HEADROOM_MIG_ENUMERATE_H_
