#include "gpu/mig_profile_check.h"

#include <algorithm>
#include <cmath>
#include <string_view>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace headroom::gpu {
namespace {

// The driver's name without its "MIG " prefix ("MIG 3g.40gb" -> "3g.40gb").
std::string DriverName(const MigProfileInfo& p) {
  constexpr std::string_view kPrefix = "MIG ";
  if (p.name.empty()) return fmt::format("profile {}", p.id);
  return p.name.rfind(kPrefix, 0) == 0 ? p.name.substr(kPrefix.size()) : p.name;
}

// Appends "<what> <driver> vs catalog <catalog>" when the two differ.
template <class T>
void Differ(const char* what, const T& driver, const T& catalog, std::vector<std::string>* out) {
  if (driver != catalog) out->push_back(fmt::format("{} {} vs catalog {}", what, driver, catalog));
}

std::vector<std::string> Differences(const MigProfileInfo& d, const mig::GiProfile& c) {
  std::vector<std::string> out;
  if (d.nvml_profile != c.nvml_value) {
    out.push_back(fmt::format("NVML profile {:#x} vs catalog {:#x} ({})", d.nvml_profile,
                              c.nvml_value, c.nvml_enum));
  }
  Differ("slices", d.slices, c.compute_slices, &out);
  Differ("SMs", d.sm_count, c.sm_count, &out);
  if (std::abs(MemoryGib(d) - c.memory_gib) > kMigMemoryToleranceGib) {
    out.push_back(fmt::format("memory {:.2f} GiB vs catalog {:.2f}", MemoryGib(d), c.memory_gib));
  }
  Differ("engines CE/DEC/ENC/JPG/OFA", EnginesText(d), EnginesText(c), &out);
  Differ("max instances", d.max_instances, c.max_instances, &out);
  Differ("placements", PlacementsText(d.placements), PlacementsText(CatalogPlacements(c)), &out);
  return out;
}

}  // namespace

std::string MigProfileComparison::Verdict() const {
  return ok() ? "ok" : fmt::format("{}", fmt::join(differences, "; "));
}

std::string EnginesText(const MigProfileInfo& p) {
  return fmt::format("{}/{}/{}/{}/{}", p.copy_engines, p.decoders, p.encoders, p.jpeg, p.ofa);
}

std::string EnginesText(const mig::GiProfile& p) {
  return fmt::format("{}/{}/{}/{}/{}", p.engines.copy, p.engines.decoders, p.engines.encoders,
                     p.engines.jpeg, p.engines.ofa);
}

std::string PlacementsText(const std::vector<MigPlacement>& placements) {
  std::vector<std::string> parts;
  for (const MigPlacement& p : placements) parts.push_back(fmt::format("{}:{}", p.start, p.size));
  return fmt::format("{}", fmt::join(parts, ","));
}

std::vector<MigPlacement> CatalogPlacements(const mig::GiProfile& p) {
  std::vector<MigPlacement> out;
  for (int start : p.starts) out.push_back({start, p.memory_slices});
  return out;
}

double MemoryGib(const MigProfileInfo& p) {
  return static_cast<double>(p.memory_bytes) / core::kBytesPerGib;
}

std::vector<MigProfileComparison> CompareMigProfiles(const mig::GpuMigSpec& spec,
                                                     const std::vector<MigProfileInfo>& driver) {
  std::vector<MigProfileComparison> rows;
  for (const mig::GiProfile& c : spec.profiles) {
    MigProfileComparison row{.name = c.name, .catalog = c};
    auto d = std::find_if(driver.begin(), driver.end(),
                          [&c](const MigProfileInfo& p) { return p.id == c.id; });
    if (d == driver.end()) {
      row.differences.push_back("not listed by the driver");
    } else {
      row.driver = *d;
      row.differences = Differences(*d, c);
    }
    rows.push_back(std::move(row));
  }
  for (const MigProfileInfo& d : driver) {
    const bool known = std::any_of(spec.profiles.begin(), spec.profiles.end(),
                                   [&d](const mig::GiProfile& c) { return c.id == d.id; });
    if (known) continue;
    rows.push_back({.name = DriverName(d),
                    .driver = d,
                    .differences = {fmt::format("not in the catalog ({})", spec.name)}});
  }
  return rows;
}

}  // namespace headroom::gpu
