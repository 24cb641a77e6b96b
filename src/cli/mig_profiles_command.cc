// `headroom mig show --profiles`: the GPU-instance profiles the driver lists (profile info and
// possible placements; read-only, MIG mode may be off) beside the MIG catalog's entry for each
// GPU's type, one row per profile with a verdict. A GPU whose type the catalog lacks still gets
// its driver table, every row a mismatch. Not thread-safe (CLI).
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/terminal.h"
#include "gpu/mig_profile_check.h"
#include "report/table.h"

namespace headroom::cli {
namespace {

using nlohmann::ordered_json;

// One GPU's comparison.
struct GpuProfileCheck {
  const gpu::Device* device = nullptr;
  std::optional<gpu::MigModeState> mode = {};  // absent when the driver would not say
  std::optional<std::string> catalog = {};     // the MIG-catalog entry compared with
  std::string no_catalog_reason = {};
  std::vector<gpu::MigProfileComparison> rows = {};

  int mismatches() const {
    int n = 0;
    for (const auto& row : rows) n += row.ok() ? 0 : 1;
    return n;
  }
};

core::Result<GpuProfileCheck> Check(const GlobalOptions& global, gpu::Device& device) {
  GpuProfileCheck check{.device = &device};
  if (auto mode = device.MigMode(); mode) check.mode = *mode;
  HEADROOM_ASSIGN_OR_RETURN(std::vector<gpu::MigProfileInfo> driver, device.MigProfiles());
  mig::GpuMigSpec spec;
  if (auto found = MigSpecOfDevice(global, device); found) {
    spec = *found;
    check.catalog = spec.name;
  } else {
    spec.name = "none";
    check.no_catalog_reason = found.error().message();
  }
  check.rows = gpu::CompareMigProfiles(spec, driver);
  return check;
}

// A cell: the driver's value, or "<driver> vs <catalog>" where both exist and differ.
std::string Cell(const std::optional<std::string>& driver,
                 const std::optional<std::string>& catalog, bool same) {
  if (driver && catalog && !same) return fmt::format("{} vs {}", *driver, *catalog);
  return driver ? *driver : catalog.value_or("-");
}

// `text(x)` for the side that exists, else nullopt.
template <class T, class F>
std::optional<std::string> Side(const std::optional<T>& side, F&& text) {
  return side ? std::optional<std::string>(text(*side)) : std::nullopt;
}

std::vector<std::string> RowCells(const gpu::MigProfileComparison& row) {
  using gpu::MigProfileInfo;
  using mig::GiProfile;
  const auto& d = row.driver;
  const auto& c = row.catalog;
  // Cells of one field: driver text, catalog text, compared as text.
  auto field = [&](auto driver_text, auto catalog_text) {
    const auto dt = Side(d, driver_text);
    const auto ct = Side(c, catalog_text);
    return Cell(dt, ct, dt == ct);
  };
  const auto dmem =
      Side(d, [](const MigProfileInfo& p) { return fmt::format("{:.2f}", gpu::MemoryGib(p)); });
  const auto cmem = Side(c, [](const GiProfile& p) { return fmt::format("{:.2f}", p.memory_gib); });
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
          Cell(dmem, cmem, same_memory),
          field([](const MigProfileInfo& p) { return gpu::EnginesText(p); },
                [](const GiProfile& p) { return gpu::EnginesText(p); }),
          field([](const MigProfileInfo& p) { return std::to_string(p.max_instances); },
                [](const GiProfile& p) { return std::to_string(p.max_instances); }),
          field([](const MigProfileInfo& p) { return gpu::PlacementsText(p.placements); },
                [](const GiProfile& p) { return gpu::PlacementsText(gpu::CatalogPlacements(p)); }),
          row.ok() ? row.Verdict() : StdoutStyle().Red(row.Verdict())};
}

std::string CheckText(const GpuProfileCheck& check) {
  const gpu::DeviceInfo& info = check.device->info();
  std::string mode = "MIG mode unknown";
  if (check.mode) mode = check.mode->current ? "MIG enabled" : "MIG disabled";
  std::string out = fmt::format("GPU {} ({}): {}; driver's profiles vs catalog {}\n", info.index,
                                info.name, mode, check.catalog.value_or("(none)"));
  if (!check.catalog) out += fmt::format("no catalog entry: {}\n", check.no_catalog_reason);
  using Align = report::TextTable::Align;
  report::TextTable table({{"PROFILE", Align::kLeft},
                           {"NVML"},
                           {"ID"},
                           {"SLICES"},
                           {"SMS"},
                           {"MEMORY_GIB"},
                           {"CE/DEC/ENC/JPG/OFA"},
                           {"MAX"},
                           {"PLACEMENTS", Align::kLeft},
                           {"VERDICT", Align::kLeft}});
  for (const auto& row : check.rows) table.AddRow(RowCells(row));
  return out + table.Render(StdoutStyle());
}

ordered_json EnginesJson(int copy, int decoders, int encoders, int jpeg, int ofa) {
  return {
      {"copy", copy}, {"decoders", decoders}, {"encoders", encoders}, {"jpeg", jpeg}, {"ofa", ofa}};
}

ordered_json PlacementsJson(const std::vector<gpu::MigPlacement>& placements) {
  ordered_json out = ordered_json::array();
  for (const auto& p : placements) out.push_back({{"start", p.start}, {"size", p.size}});
  return out;
}

ordered_json DriverJson(const gpu::MigProfileInfo& p) {
  return {{"nvml_profile", p.nvml_profile},
          {"id", p.id},
          {"name", p.name},
          {"slices", p.slices},
          {"sm_count", p.sm_count},
          {"memory_bytes", p.memory_bytes},
          {"memory_gib", gpu::MemoryGib(p)},
          {"engines", EnginesJson(p.copy_engines, p.decoders, p.encoders, p.jpeg, p.ofa)},
          {"max_instances", p.max_instances},
          {"placements", PlacementsJson(p.placements)}};
}

ordered_json CatalogJson(const mig::GiProfile& p) {
  return {{"nvml_profile", p.nvml_value},
          {"nvml_enum", p.nvml_enum},
          {"id", p.id},
          {"name", p.name},
          {"slices", p.compute_slices},
          {"memory_slices", p.memory_slices},
          {"sm_count", p.sm_count},
          {"memory_gib", p.memory_gib},
          {"engines", EnginesJson(p.engines.copy, p.engines.decoders, p.engines.encoders,
                                  p.engines.jpeg, p.engines.ofa)},
          {"max_instances", p.max_instances},
          {"placements", PlacementsJson(gpu::CatalogPlacements(p))}};
}

ordered_json CheckJson(const GpuProfileCheck& check) {
  const gpu::DeviceInfo& info = check.device->info();
  ordered_json gpu = {{"index", info.index}, {"name", info.name}, {"uuid", info.uuid}};
  gpu["mig"] =
      check.mode ? ordered_json{{"current", check.mode->current}, {"pending", check.mode->pending}}
                 : ordered_json();
  ordered_json profiles = ordered_json::array();
  for (const auto& row : check.rows) {
    profiles.push_back({{"name", row.name},
                        {"driver", row.driver ? DriverJson(*row.driver) : ordered_json()},
                        {"catalog", row.catalog ? CatalogJson(*row.catalog) : ordered_json()},
                        {"verdict", row.Verdict()}});
  }
  return {{"gpu", gpu},
          {"catalog", check.catalog ? ordered_json(*check.catalog) : ordered_json()},
          {"profiles", profiles},
          {"match", check.mismatches() == 0}};
}

// The last line: all agree, or which profiles differ.
std::string Summary(const std::vector<GpuProfileCheck>& checks) {
  int profiles = 0;
  std::vector<std::string> differing;
  for (const auto& check : checks) {
    profiles += static_cast<int>(check.rows.size());
    for (const auto& row : check.rows) {
      if (!row.ok())
        differing.push_back(fmt::format("GPU {} {}", check.device->info().index, row.name));
    }
  }
  if (differing.empty()) {
    return fmt::format("match: all {} profiles agree with the catalog ({} GPU{})\n", profiles,
                       checks.size(), checks.size() == 1 ? "" : "s");
  }
  return fmt::format("MISMATCH: {} of {} profiles differ from the catalog: {}\n", differing.size(),
                     profiles, fmt::join(differing, ", "));
}

}  // namespace

int RunMigProfileCheck(const GlobalOptions& global, const BackendOptions& backend, bool json) {
  core::SystemClock clock;
  auto set = OpenDevices(global, backend, &clock);
  if (!set) return ReportError(set.error());
  std::vector<GpuProfileCheck> checks;
  bool match = true;
  for (const auto& device : set->devices) {
    auto check = Check(global, *device);
    if (!check) return ReportError(check.error());
    match = match && check->mismatches() == 0;
    if (!json) std::cout << CheckText(*check);
    checks.push_back(std::move(*check));
  }
  if (json) {
    // One GPU: its object; several: an array of them.
    ordered_json out = ordered_json::array();
    for (const auto& check : checks) out.push_back(CheckJson(check));
    std::cout << (out.size() == 1 ? out[0] : out).dump(2) << "\n";
  } else {
    std::cout << Summary(checks);
  }
  return match ? kExitOk : kExitRuntime;
}

}  // namespace headroom::cli
