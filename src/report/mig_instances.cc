#include "report/mig_instances.h"

#include <fmt/format.h>

namespace headroom::report {

const MigProfileGeometry* MigGeometry::Find(const std::string& profile) const {
  for (const MigProfileGeometry& p : profiles) {
    if (p.name == profile) return &p;
  }
  return nullptr;
}

MigGeometry GeometryOf(const mig::GpuMigSpec& spec) {
  MigGeometry g{
      .gpu = spec.name, .memory_slices = spec.memory_slices, .compute_slices = spec.compute_slices};
  for (const mig::GiProfile& p : spec.profiles) {
    g.profiles.push_back({.name = p.name,
                          .short_name = p.short_name,
                          .compute_slices = p.compute_slices,
                          .memory_slices = p.memory_slices});
  }
  return g;
}

namespace {

MigInstance WholeGpu(const MigGeometry& g) {
  return {
      .slice = "whole GPU", .memory_slices = g.memory_slices, .compute_slices = g.compute_slices};
}

MigInstance Placed(const MigProfileGeometry& p, int start) {
  return {.slice = fmt::format("{}@{}", p.name, start),
          .profile = p.name,
          .start = start,
          .memory_slices = p.memory_slices,
          .compute_slices = p.compute_slices};
}

}  // namespace

std::vector<MigInstance> InstancesOf(const MigGeometry& geometry,
                                     const std::optional<mig::Layout>& layout,
                                     const std::vector<mig::Slice>& slices) {
  std::vector<MigInstance> out;
  if (!layout) {
    out.push_back(WholeGpu(geometry));
  } else {
    for (const mig::GpuInstance& gi : layout->instances) {
      const MigProfileGeometry* p = geometry.Find(gi.profile);
      out.push_back(p != nullptr ? Placed(*p, gi.start)
                                 : MigInstance{.slice = gi.profile, .profile = gi.profile});
    }
  }
  for (std::size_t i = 0; i < out.size() && i < slices.size(); ++i) {
    out[i].slice = slices[i].name;
    out[i].sm_count = slices[i].sm_count;
    out[i].memory_gib = slices[i].memory_gib;
  }
  return out;
}

core::Result<std::vector<MigInstance>> InstancesOfText(const MigGeometry& geometry,
                                                       const std::string& layout) {
  if (layout == "MIG off") return std::vector<MigInstance>{WholeGpu(geometry)};
  HEADROOM_ASSIGN_OR_RETURN(const mig::Layout parsed, mig::ParseLayout(layout));
  std::vector<MigInstance> out;
  for (const mig::GpuInstance& gi : parsed.instances) {
    const MigProfileGeometry* p = geometry.Find(gi.profile);
    if (p == nullptr) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("layout '{}': profile '{}' is not among {}'s profiles", layout, gi.profile,
                      geometry.gpu)));
    }
    out.push_back(Placed(*p, gi.start));
  }
  return out;
}

std::string ShortLayoutName(const MigGeometry& geometry, const std::string& layout) {
  auto instances = InstancesOfText(geometry, layout);
  if (!instances || layout == "MIG off") return layout;
  // Runs of one class in placement order: "1g x4 + 3g".
  std::vector<std::pair<std::string, int>> runs;
  for (const MigInstance& in : *instances) {
    const std::string name = geometry.Find(in.profile)->short_name;
    if (!runs.empty() && runs.back().first == name) {
      ++runs.back().second;
    } else {
      runs.emplace_back(name, 1);
    }
  }
  std::string out;
  for (const auto& [name, count] : runs) {
    out += fmt::format("{}{}{}", out.empty() ? "" : " + ", name,
                       count > 1 ? fmt::format(" x{}", count) : "");
  }
  return out;
}

std::string PlacedLayoutName(const MigGeometry& geometry, const std::string& layout) {
  auto instances = InstancesOfText(geometry, layout);
  if (!instances || layout == "MIG off") return layout;
  std::string out;
  for (const MigInstance& in : *instances) {
    out += fmt::format("{}{}@{}", out.empty() ? "" : ",", geometry.Find(in.profile)->short_name,
                       in.start);
  }
  return out;
}

SlotDiagram MigSlotDiagram(const MigGeometry& geometry, const std::vector<MigInstance>& instances,
                           const std::vector<std::vector<std::string>>& lines, std::string title,
                           std::vector<std::string> side) {
  SlotDiagram d{
      .title = std::move(title), .memory_slices = geometry.memory_slices, .side = std::move(side)};
  for (std::size_t i = 0; i < instances.size(); ++i) {
    const MigInstance& in = instances[i];
    std::string detail = fmt::format("{}/{} compute", in.compute_slices, geometry.compute_slices);
    // One memory slice leaves room for the compute slices only; its memory is in the caption.
    if (in.memory_gib > 0 && in.memory_slices > 1) {
      detail += fmt::format(", {:.0f} GiB", in.memory_gib);
    }
    d.blocks.push_back({.label = in.profile.empty() ? "whole GPU (MIG off)" : in.slice,
                        .detail = std::move(detail),
                        .start = in.start,
                        .memory_slices = in.memory_slices,
                        .lines = i < lines.size() ? lines[i] : std::vector<std::string>{}});
  }
  return d;
}

}  // namespace headroom::report
