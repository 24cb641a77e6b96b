// Comparing the driver's MIG GPU-instance profiles (Device::MigProfiles) with the MIG catalog's
// entry for that GPU type: one row per profile ID found on either side, with what differs.
// Pure: no I/O. Thread-compatible.
#ifndef HEADROOM_GPU_MIG_PROFILE_CHECK_H_
#define HEADROOM_GPU_MIG_PROFILE_CHECK_H_

#include <optional>
#include <string>
#include <vector>

#include "gpu/device.h"
#include "mig/profile.h"

namespace headroom::gpu {

// Memory sizes closer than this agree: NVML reports MiB, the catalog GiB with two decimals.
inline constexpr double kMigMemoryToleranceGib = 0.01;

// One profile ID as the driver and the catalog describe it. At least one side is present.
struct MigProfileComparison {
  std::string name = {};                       // the catalog's name, else the driver's
  std::optional<MigProfileInfo> driver = {};   // absent: the driver does not list it
  std::optional<mig::GiProfile> catalog = {};  // absent: the catalog lacks it
  std::vector<std::string> differences = {};   // e.g. "memory 69.75 GiB vs catalog 64.00"

  bool ok() const { return differences.empty(); }
  // "ok", or the differences joined with "; ".
  std::string Verdict() const;
};

// Rows in catalog order, then the profiles only the driver lists (by NVML profile value).
// Compared: NVML profile value, compute slices, SMs, memory (within kMigMemoryToleranceGib),
// engines (CE/DEC/ENC/JPG/OFA), max instances and placements (start and size in memory slices).
std::vector<MigProfileComparison> CompareMigProfiles(const mig::GpuMigSpec& spec,
                                                     const std::vector<MigProfileInfo>& driver);

// "CE/DEC/ENC/JPG/OFA" counts as text, e.g. "3/3/0/3/0".
std::string EnginesText(const MigProfileInfo& p);
std::string EnginesText(const mig::GiProfile& p);
// Placements as "start:size" joined with ",", e.g. "0:4,4:4".
std::string PlacementsText(const std::vector<MigPlacement>& placements);
// The catalog profile's placements in the driver's terms.
std::vector<MigPlacement> CatalogPlacements(const mig::GiProfile& p);
double MemoryGib(const MigProfileInfo& p);

}  // namespace headroom::gpu

#endif  // HEADROOM_GPU_MIG_PROFILE_CHECK_H_
