#include "report/mig_profiles_report.h"

#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "format/table.h"
#include "gpu/mig_profile_check.h"

namespace headroom::report {
namespace {

using nlohmann::ordered_json;

// A cell: the driver's value, or "<driver> vs <catalog>" where both exist and differ.
std::string ProfileCheckCell(const std::optional<std::string>& driver,
                             const std::optional<std::string>& catalog, bool same) {
  if (driver && catalog && !same) return fmt::format("{} vs {}", *driver, *catalog);
  return driver ? *driver : catalog.value_or("-");
}

// `text(x)` for the side that exists, else nullopt.
template <class T, class F>
std::optional<std::string> ProfileCheckSide(const std::optional<T>& side, F&& text) {
  return side ? std::optional<std::string>(text(*side)) : std::nullopt;
}

std::vector<std::string> ProfileCheckCells(const gpu::MigProfileComparison& row,
                                           const format::TextStyle& style) {
  using gpu::MigProfileInfo;
  using mig::GiProfile;
  const auto& d = row.driver;
  const auto& c = row.catalog;
  // Cells of one field: driver text, catalog text, compared as text.
  auto field = [&](auto driver_text, auto catalog_text) {
    const auto dt = ProfileCheckSide(d, driver_text);
    const auto ct = ProfileCheckSide(c, catalog_text);
    return ProfileCheckCell(dt, ct, dt == ct);
  };
  const auto dmem = ProfileCheckSide(
      d, [](const MigProfileInfo& p) { return fmt::format("{:.2f}", gpu::MemoryGib(p)); });
  const auto cmem =
      ProfileCheckSide(c, [](const GiProfile& p) { return fmt::format("{:.2f}", p.memory_gib); });
  const bool same_memory =
      !d || !c || std::abs(gpu::MemoryGib(*d) - c->memory_gib) <= gpu::kMigMemoryToleranceGib;
  return {row.name,
          field([](const MigProfileInfo& p) { return fmt::format("{:#x}", p.nvml_profile); },
                [](const GiProfile& p) { return fmt::format("{:#x}", p.nvml_value); }),
          field([](const MigProfileInfo& p) { return std::to_string(p.id); },
                [](const GiProfile& p) { return std::to_string(p.id); }),
          field([](const MigProfileInfo& p) { return std::to_string(p.slices); },
                [](const GiProfile& p) { return std::to_string(p.compute_slices); }),
          field([](const MigProfileInfo& p) { return std::to_string(p.sm_count); },
                [](const GiProfile& p) { return std::to_string(p.sm_count); }),
          ProfileCheckCell(dmem, cmem, same_memory),
          field([](const MigProfileInfo& p) { return gpu::EnginesText(p); },
                [](const GiProfile& p) { return gpu::EnginesText(p); }),
          field([](const MigProfileInfo& p) { return std::to_string(p.max_instances); },
                [](const GiProfile& p) { return std::to_string(p.max_instances); }),
          field([](const MigProfileInfo& p) { return gpu::PlacementsText(p.placements); },
                [](const GiProfile& p) { return gpu::PlacementsText(gpu::CatalogPlacements(p)); }),
          row.ok() ? row.Verdict() : style.Red(row.Verdict())};
}

ordered_json ProfileEnginesJson(int copy, int decoders, int encoders, int jpeg, int ofa) {
  return {
      {"copy", copy}, {"decoders", decoders}, {"encoders", encoders}, {"jpeg", jpeg}, {"ofa", ofa}};
}

ordered_json ProfilePlacementsJson(const std::vector<gpu::MigPlacement>& placements) {
  ordered_json out = ordered_json::array();
  for (const auto& p : placements) out.push_back({{"start", p.start}, {"size", p.size}});
  return out;
}

ordered_json DriverProfileJson(const gpu::MigProfileInfo& p) {
  return {{"nvml_profile", p.nvml_profile},
          {"id", p.id},
          {"name", p.name},
          {"slices", p.slices},
          {"sm_count", p.sm_count},
          {"memory_bytes", p.memory_bytes},
          {"memory_gib", gpu::MemoryGib(p)},
          {"engines", ProfileEnginesJson(p.copy_engines, p.decoders, p.encoders, p.jpeg, p.ofa)},
          {"max_instances", p.max_instances},
          {"placements", ProfilePlacementsJson(p.placements)}};
}

ordered_json CatalogProfileJson(const mig::GiProfile& p) {
  return {{"nvml_profile", p.nvml_value},
          {"nvml_enum", p.nvml_enum},
          {"id", p.id},
          {"name", p.name},
          {"slices", p.compute_slices},
          {"memory_slices", p.memory_slices},
          {"sm_count", p.sm_count},
          {"memory_gib", p.memory_gib},
          {"engines", ProfileEnginesJson(p.engines.copy, p.engines.decoders, p.engines.encoders,
                                         p.engines.jpeg, p.engines.ofa)},
          {"max_instances", p.max_instances},
          {"placements", ProfilePlacementsJson(gpu::CatalogPlacements(p))}};
}

}  // namespace

std::string MigProfileCheckText(const gpu::GpuMigProfileCheck& check,
                                const format::TextStyle& style) {
  std::string mode = "MIG mode unknown";
  if (check.mode) mode = check.mode->current ? "MIG enabled" : "MIG disabled";
  std::string out =
      fmt::format("GPU {} ({}): {}; driver's profiles vs catalog {}\n", check.info.index,
                  check.info.name, mode, check.catalog.value_or("(none)"));
  if (!check.catalog) out += fmt::format("no catalog entry: {}\n", check.no_catalog_reason);
  using Align = format::TextTable::Align;
  format::TextTable table({{"PROFILE", Align::kLeft},
                           {"NVML"},
                           {"ID"},
                           {"SLICES"},
                           {"SMS"},
                           {"MEMORY_GIB"},
                           {"CE/DEC/ENC/JPG/OFA"},
                           {"MAX"},
                           {"PLACEMENTS", Align::kLeft},
                           {"VERDICT", Align::kLeft}});
  for (const auto& row : check.rows) table.AddRow(ProfileCheckCells(row, style));
  return out + table.Render(style);
}

ordered_json MigProfileCheckJson(const gpu::GpuMigProfileCheck& check) {
  ordered_json gpu = {
      {"index", check.info.index}, {"name", check.info.name}, {"uuid", check.info.uuid}};
  gpu["mig"] =
      check.mode ? ordered_json{{"current", check.mode->current}, {"pending", check.mode->pending}}
                 : ordered_json();
  ordered_json profiles = ordered_json::array();
  for (const auto& row : check.rows) {
    profiles.push_back(
        {{"name", row.name},
         {"driver", row.driver ? DriverProfileJson(*row.driver) : ordered_json()},
         {"catalog", row.catalog ? CatalogProfileJson(*row.catalog) : ordered_json()},
         {"verdict", row.Verdict()}});
  }
  return {{"gpu", gpu},
          {"catalog", check.catalog ? ordered_json(*check.catalog) : ordered_json()},
          {"profiles", profiles},
          {"match", check.mismatches() == 0}};
}

ordered_json MigProfileChecksJson(const std::vector<gpu::GpuMigProfileCheck>& checks) {
  ordered_json out = ordered_json::array();
  for (const auto& check : checks) out.push_back(MigProfileCheckJson(check));
  return out.size() == 1 ? out[0] : out;
}

std::string MigProfileCheckSummary(const std::vector<gpu::GpuMigProfileCheck>& checks) {
  int profiles = 0;
  std::vector<std::string> differing;
  for (const auto& check : checks) {
    profiles += static_cast<int>(check.rows.size());
    for (const auto& row : check.rows) {
      if (!row.ok()) differing.push_back(fmt::format("GPU {} {}", check.info.index, row.name));
    }
  }
  if (differing.empty()) {
    return fmt::format("match: all {} profiles agree with the catalog ({} GPU{})\n", profiles,
                       checks.size(), checks.size() == 1 ? "" : "s");
  }
  return fmt::format("MISMATCH: {} of {} profiles differ from the catalog: {}\n", differing.size(),
                     profiles, fmt::join(differing, ", "));
}

}  // namespace headroom::report
