#include "gpu/mig_profile_check.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "catalog/mig_catalog.h"
#include "gpu/sim/sim_mig.h"

namespace headroom::gpu {
namespace {

const mig::GpuMigSpec& H200Mig() {
  static const auto catalog = catalog::MigCatalog::Embedded();
  return **catalog->Gpu("h200-141gb-sxm");
}

// The catalog's profiles as the simulated driver lists them, MIG mode off.
std::vector<MigProfileInfo> DriverProfiles() {
  const sim::SimMig mig(H200Mig(), /*enabled=*/false, 0, "GPU-test", {});
  return mig.Profiles();
}

MigProfileInfo& ById(std::vector<MigProfileInfo>& profiles, int id) {
  for (MigProfileInfo& p : profiles) {
    if (p.id == id) return p;
  }
  ADD_FAILURE() << "no profile " << id;
  return profiles.front();
}

// The row of catalog profile `id`.
MigProfileComparison RowOf(const std::vector<MigProfileComparison>& rows, int id) {
  for (const MigProfileComparison& row : rows) {
    if (row.catalog && row.catalog->id == id) return row;
  }
  ADD_FAILURE() << "no row for profile " << id;
  return {};
}

TEST(MigProfileCheckTest, SimulatedDriverListsTheCatalogAndAgrees) {
  std::vector<MigProfileInfo> driver = DriverProfiles();
  ASSERT_EQ(driver.size(), H200Mig().profiles.size());
  for (size_t i = 1; i < driver.size(); ++i) {
    EXPECT_LT(driver[i - 1].nvml_profile, driver[i].nvml_profile);  // the driver's order
  }
  const MigProfileInfo& three = ById(driver, 9);
  EXPECT_EQ(three.slices, 3);
  EXPECT_EQ(three.sm_count, 60);
  EXPECT_EQ(PlacementsText(three.placements), "0:4,4:4");
  const auto rows = CompareMigProfiles(H200Mig(), driver);
  ASSERT_EQ(rows.size(), H200Mig().profiles.size());
  for (const MigProfileComparison& row : rows) {
    EXPECT_TRUE(row.ok()) << row.name << ": " << row.Verdict();
    EXPECT_EQ(row.Verdict(), "ok");
  }
  EXPECT_EQ(rows.front().name, H200Mig().profiles.front().name);  // catalog order
}

TEST(MigProfileCheckTest, MemoryWithinAHundredthOfAGibAgrees) {
  std::vector<MigProfileInfo> driver = DriverProfiles();
  ById(driver, 9).memory_bytes += 5ULL << 20;  // 5 MiB, under 0.01 GiB
  EXPECT_TRUE(RowOf(CompareMigProfiles(H200Mig(), driver), 9).ok());
  ById(driver, 9).memory_bytes += 6ULL << 20;  // 11 MiB in all: over
  bool named = false;
  for (const auto& row : CompareMigProfiles(H200Mig(), driver)) {
    if (row.catalog && row.catalog->id == 9) {
      EXPECT_EQ(row.differences.size(), 1u);
      EXPECT_EQ(row.differences.at(0).rfind("memory ", 0), 0u) << row.Verdict();
      EXPECT_NE(row.Verdict().find("vs catalog"), std::string::npos);
      named = true;
    } else {
      EXPECT_TRUE(row.ok()) << row.name << ": " << row.Verdict();
    }
  }
  EXPECT_TRUE(named);
}

TEST(MigProfileCheckTest, NamesEveryDifferingField) {
  std::vector<MigProfileInfo> driver = DriverProfiles();
  MigProfileInfo& seven = ById(driver, 0);
  seven.memory_bytes = 71424ULL << 20;  // 69.75 GiB
  seven.sm_count = 131;
  seven.slices = 8;
  seven.ofa = 0;
  seven.max_instances = 2;
  seven.nvml_profile = 0x5;
  seven.placements.push_back({4, 8});
  const MigProfileComparison row = RowOf(CompareMigProfiles(H200Mig(), driver), 0);
  const std::string verdict = row.Verdict();
  for (const char* part :
       {"NVML profile 0x5 vs catalog 0x4", "slices 8 vs catalog 7", "SMs 131 vs catalog 132",
        "memory 69.75 GiB vs catalog", "engines CE/DEC/ENC/JPG/OFA", "max instances 2 vs catalog 1",
        "placements 0:8,4:8 vs catalog 0:8"}) {
    EXPECT_NE(verdict.find(part), std::string::npos) << part << " in: " << verdict;
  }
  EXPECT_EQ(row.differences.size(), 7u) << verdict;
}

TEST(MigProfileCheckTest, ProfilesOnOneSideOnlyAreMismatches) {
  std::vector<MigProfileInfo> driver = DriverProfiles();
  driver.erase(driver.begin());  // the driver lacks the catalog's first (by NVML value)
  MigProfileInfo extra = driver.front();
  extra.id = 47;
  extra.nvml_profile = 0xA;
  extra.name = "MIG 1g.18gb+gfx";
  driver.push_back(extra);
  const auto rows = CompareMigProfiles(H200Mig(), driver);
  ASSERT_EQ(rows.size(), H200Mig().profiles.size() + 1);
  int missing = 0;
  for (const auto& row : rows) {
    if (!row.driver) {
      ++missing;
      EXPECT_EQ(row.Verdict(), "not listed by the driver");
    }
  }
  EXPECT_EQ(missing, 1);
  EXPECT_EQ(rows.back().name, "1g.18gb+gfx");
  EXPECT_FALSE(rows.back().catalog.has_value());
  EXPECT_EQ(rows.back().Verdict(), "not in the catalog (h200-141gb-sxm)");
}

}  // namespace
}  // namespace headroom::gpu
