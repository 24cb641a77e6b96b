#include "report/mig_catalog_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "format/table.h"
#include "mig/enumerate.h"

namespace headroom::report {
namespace {

using nlohmann::ordered_json;

std::string EngineCounts(const mig::Engines& e) {
  return fmt::format("{}/{}/{}/{}/{}", e.copy, e.decoders, e.encoders, e.jpeg, e.ofa);
}

std::vector<std::string> ProfileNames(const std::vector<const mig::GiProfile*>& profiles) {
  std::vector<std::string> names;
  for (const mig::GiProfile* p : profiles) names.push_back(p->name);
  return names;
}

}  // namespace

std::string MigProfilesText(const mig::GpuMigSpec& spec, const format::TextStyle& style) {
  using Align = format::TextTable::Align;
  format::TextTable table({{"PROFILE", Align::kLeft},
                           {"CLASS", Align::kLeft},
                           {"ID"},
                           {"NVML_ENUM", Align::kLeft},
                           {"SLICES_C/M"},
                           {"SMS"},
                           {"MEMORY_GIB"},
                           {"CE/DEC/ENC/JPG/OFA"},
                           {"STARTS", Align::kLeft},
                           {"MAX"}});
  for (const mig::GiProfile& p : spec.profiles) {
    table.AddRow({p.name, p.short_name, std::to_string(p.id),
                  fmt::format("NVML_{} ({:#x})", p.nvml_enum, p.nvml_value),
                  fmt::format("{}/{}", p.compute_slices, p.memory_slices),
                  std::to_string(p.sm_count), fmt::format("{:.2f}", p.memory_gib),
                  EngineCounts(p.engines), fmt::format("{}", fmt::join(p.starts, ",")),
                  std::to_string(p.max_instances)});
  }
  return fmt::format("MIG profiles of {}: {} memory slices, {} compute slices\n", spec.name,
                     spec.memory_slices, spec.compute_slices) +
         table.Render(style);
}

std::string ValidLayoutText(const mig::GpuMigSpec& spec, const mig::Layout& layout) {
  int memory = 0;
  int compute = 0;
  for (const mig::GpuInstance& instance : layout.instances) {
    const mig::GiProfile* p = spec.FindProfile(instance.profile);
    memory += p->memory_slices;
    compute += p->compute_slices;
  }
  return fmt::format("valid on {}: {} ({} of {} memory slices, {} of {} compute slices)\n",
                     spec.name, mig::FormatLayout(layout), memory, spec.memory_slices, compute,
                     spec.compute_slices);
}

std::string MigLayoutsText(const mig::GpuMigSpec& spec,
                           const std::vector<const mig::GiProfile*>& profiles,
                           const std::vector<mig::Layout>& layouts) {
  std::string out;
  for (const mig::Layout& layout : layouts) out += mig::FormatLayout(layout) + "\n";
  return out + fmt::format("{} maximal layouts ({} distinct multisets) of {} on {}\n",
                           layouts.size(), mig::CountDistinctMultisets(layouts),
                           fmt::join(ProfileNames(profiles), ", "), spec.name);
}

ordered_json MigLayoutsJson(const mig::GpuMigSpec& spec,
                            const std::vector<const mig::GiProfile*>& profiles,
                            const std::vector<mig::Layout>& layouts) {
  ordered_json out;
  out["gpu"] = spec.name;
  out["profiles"] = ProfileNames(profiles);
  out["layouts"] = ordered_json::array();
  for (const mig::Layout& layout : layouts) out["layouts"].push_back(mig::FormatLayout(layout));
  return out;
}

}  // namespace headroom::report
