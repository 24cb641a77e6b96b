// What the MIG reports need to know about a GPU's partitions to draw and name them, kept in the
// report's own files so that `headroom report DIR` needs no catalog: the GPU's slice counts and
// each profile's geometry (MigGeometry), and one GPU instance as placed (MigInstance). Also the
// slot drawing of a list of instances (report/mig_slots.h) and a layout's short name ("1g x4 +
// 3g"). Plain values and pure functions; thread-compatible.
#ifndef HEADROOM_REPORT_MIG_INSTANCES_H_
#define HEADROOM_REPORT_MIG_INSTANCES_H_

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "format/json_fields.h"
#include "mig/layout.h"
#include "mig/profile.h"
#include "mig/slice_model.h"
#include "report/mig_slots.h"

namespace headroom::report {

struct MigProfileGeometry {
  std::string name = {};        // "3g.71gb"
  std::string short_name = {};  // "3g"
  int compute_slices = 0;
  int memory_slices = 0;
};

struct MigGeometry {
  std::string gpu = {};  // the MIG catalog's name, e.g. "h200-141gb-sxm"
  int memory_slices = 0;
  int compute_slices = 0;
  std::vector<MigProfileGeometry> profiles = {};  // in catalog order

  const MigProfileGeometry* Find(const std::string& profile) const;
};

// One GPU instance as placed, or the whole GPU with MIG off (profile empty, every slice).
struct MigInstance {
  std::string slice = {};    // "3g.71gb@4", "whole GPU"
  std::string profile = {};  // "3g.71gb"; empty: MIG off
  int start = 0;             // first memory slice
  int memory_slices = 0;
  int compute_slices = 0;
  int sm_count = 0;
  double memory_gib = 0;
};

MigGeometry GeometryOf(const mig::GpuMigSpec& spec);

// The instances of `layout` (nullopt: MIG off, one instance over the whole GPU) with the given
// slices' SMs and memory. REQUIRES: slices[i] is layout's i-th instance (mig::LayoutSlices), or
// the whole GPU's slice with MIG off.
std::vector<MigInstance> InstancesOf(const MigGeometry& geometry,
                                     const std::optional<mig::Layout>& layout,
                                     const std::vector<mig::Slice>& slices);

// The instances of a layout's text ("MIG off" or canonical text), SMs and memory left zero.
// kInvalidArgument when it does not parse or names a profile `geometry` lacks.
[[nodiscard]] core::Result<std::vector<MigInstance>> InstancesOfText(const MigGeometry& geometry,
                                                                     const std::string& layout);

// "1g x4 + 3g", "MIG off": profile classes with counts, in placement order. Falls back to the
// text itself when it does not parse.
std::string ShortLayoutName(const MigGeometry& geometry, const std::string& layout);

// "3g@0,2g@4,1g@6,1g@7": each instance's profile class at its start slot, shorter than the
// canonical text for headlines and tables; "MIG off" stays. Falls back to the text itself when it
// does not parse.
std::string PlacedLayoutName(const MigGeometry& geometry, const std::string& layout);

// The drawing of `instances`, with `lines` of text in each (per instance; may be shorter) and
// `side` lines beside the row.
SlotDiagram MigSlotDiagram(const MigGeometry& geometry, const std::vector<MigInstance>& instances,
                           const std::vector<std::vector<std::string>>& lines, std::string title,
                           std::vector<std::string> side);

// The JSON forms of the geometry and of an instance in the MIG reports' files, written and read
// through format::WriteFields and format::ReadFields.
inline constexpr auto kMigProfileGeometryFields =
    std::tuple{format::Field("name", &MigProfileGeometry::name),
               format::Field("short_name", &MigProfileGeometry::short_name),
               format::Field("compute_slices", &MigProfileGeometry::compute_slices),
               format::Field("memory_slices", &MigProfileGeometry::memory_slices)};
inline constexpr auto kMigGeometryFields =
    std::tuple{format::Field("gpu", &MigGeometry::gpu),
               format::Field("memory_slices", &MigGeometry::memory_slices),
               format::Field("compute_slices", &MigGeometry::compute_slices),
               format::Field("profiles", &MigGeometry::profiles, kMigProfileGeometryFields)};
inline constexpr auto kMigInstanceFields =
    std::tuple{format::Field("slice", &MigInstance::slice),
               format::Field("profile", &MigInstance::profile),
               format::Field("start", &MigInstance::start),
               format::Field("memory_slices", &MigInstance::memory_slices),
               format::Field("compute_slices", &MigInstance::compute_slices),
               format::Field("sm_count", &MigInstance::sm_count),
               format::Field("memory_gib", &MigInstance::memory_gib)};

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MIG_INSTANCES_H_
