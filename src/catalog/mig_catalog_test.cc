#include "catalog/mig_catalog.h"

#include <string>

#include <gtest/gtest.h>

#include "catalog/testing/embedded_catalogs.h"

namespace headroom::catalog {
namespace {

// The profile IDs, NVML enum values, slices, starts and instance limits every MIG GPU shares
// (../shared/brief/mig.md, "Profile IDs" and "Placements").
struct SharedProfile {
  const char* short_name;
  int id;
  int nvml_value;
  int compute_slices;
  int memory_slices;
  std::vector<int> starts;
  int max_instances;
};

const std::vector<SharedProfile>& SharedProfiles() {
  static const std::vector<SharedProfile> kProfiles = {
      {"1g", 19, 0x0, 1, 1, {0, 1, 2, 3, 4, 5, 6}, 7},
      {"1g+me", 20, 0x7, 1, 1, {0, 1, 2, 3, 4, 5, 6}, 1},
      {"1g.2x", 15, 0x9, 1, 2, {0, 2, 4, 6}, 4},
      {"2g", 14, 0x1, 2, 2, {0, 2, 4}, 3},
      {"3g", 9, 0x2, 3, 4, {0, 4}, 2},
      {"4g", 5, 0x3, 4, 4, {0}, 1},
      {"7g", 0, 0x4, 7, 8, {0}, 1},
  };
  return kProfiles;
}

MigCatalog Embedded() {
  auto catalog = MigCatalog::Embedded();
  EXPECT_TRUE(catalog) << catalog.error().message();
  return catalog.value_or(MigCatalog());
}

using testing::ParseError;

constexpr const char* kMinimal = R"(kind: mig
gpu: test-gpu
memory_slices: 8
compute_slices: 7
profiles:
  - id: 19
    nvml: GPU_INSTANCE_PROFILE_1_SLICE
    name: 1g.10gb
    short_name: 1g
    compute_slices: 1
    memory_slices: 1
    sm_count: 14
    memory_gib: 9.5
    engines: {copy: 1, decoders: 0, encoders: 0, jpeg: 0, ofa: 0}
    starts: [0, 1, 2, 3, 4, 5, 6]
    max_instances: 7
)";

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  const size_t pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << from;
  return pos == std::string::npos ? text : text.replace(pos, from.size(), to);
}

TEST(MigCatalogTest, EveryGpuLoadsWithTheSharedProfiles) {
  const MigCatalog catalog = Embedded();
  const std::vector<std::string> expected = {"a100-40gb-sxm", "a100-80gb-sxm", "h100-80gb-pcie",
                                             "h100-80gb-sxm", "h100-nvl-94gb", "h200-141gb-sxm"};
  ASSERT_EQ(catalog.gpus().size(), expected.size());
  for (size_t g = 0; g < expected.size(); ++g) {
    const mig::GpuMigSpec& spec = catalog.gpus()[g];
    SCOPED_TRACE(spec.name);
    EXPECT_EQ(spec.name, expected[g]);
    EXPECT_EQ(spec.memory_slices, 8);
    EXPECT_EQ(spec.compute_slices, 7);
    ASSERT_EQ(spec.profiles.size(), SharedProfiles().size());
    for (const SharedProfile& want : SharedProfiles()) {
      const mig::GiProfile* p = spec.FindProfileOrClass(want.short_name);
      ASSERT_NE(p, nullptr) << want.short_name;
      EXPECT_EQ(p->id, want.id) << p->name;
      EXPECT_EQ(p->nvml_value, want.nvml_value) << p->name;
      EXPECT_EQ(p->compute_slices, want.compute_slices) << p->name;
      EXPECT_EQ(p->memory_slices, want.memory_slices) << p->name;
      EXPECT_EQ(p->starts, want.starts) << p->name;
      EXPECT_EQ(p->max_instances, want.max_instances) << p->name;
      EXPECT_EQ(p->media_extension, std::string(want.short_name) == "1g+me") << p->name;
      EXPECT_GT(p->sm_count, 0);
      EXPECT_GT(p->memory_gib, 0);
      EXPECT_GE(p->engines.copy, 1);
    }
  }
}

TEST(MigCatalogTest, NamesAndSmCountsFollowTheGuide) {
  const MigCatalog catalog = Embedded();
  struct Row {
    const char* gpu;
    const char* name;
    int sm_count;
  };
  // ../shared/brief/mig.md, "Profiles per GPU".
  for (const Row& row : std::vector<Row>{{"a100-40gb-sxm", "1g.5gb", 14},
                                         {"a100-40gb-sxm", "7g.40gb", 98},
                                         {"a100-80gb-sxm", "3g.40gb", 42},
                                         {"h100-80gb-sxm", "1g.20gb", 26},
                                         {"h100-80gb-sxm", "7g.80gb", 132},
                                         {"h100-80gb-pcie", "2g.20gb", 30},
                                         {"h100-80gb-pcie", "7g.80gb", 114},
                                         {"h100-nvl-94gb", "3g.47gb", 60},
                                         {"h200-141gb-sxm", "1g.18gb", 16},
                                         {"h200-141gb-sxm", "7g.141gb", 132}}) {
    auto spec = catalog.Gpu(row.gpu);
    ASSERT_TRUE(spec) << spec.error().message();
    const mig::GiProfile* p = (*spec)->FindProfile(row.name);
    ASSERT_NE(p, nullptr) << row.gpu << " " << row.name;
    EXPECT_EQ(p->sm_count, row.sm_count) << row.gpu << " " << row.name;
  }
}

TEST(MigCatalogTest, EveryGpuButTheH100NvlHasAHardwareEntry) {
  auto hardware = HardwareCatalog::Embedded();
  ASSERT_TRUE(hardware) << hardware.error().message();
  const MigCatalog catalog = Embedded();
  for (const mig::GpuMigSpec& spec : catalog.gpus()) {
    EXPECT_EQ(hardware->Gpu(spec.name).has_value(), spec.name != "h100-nvl-94gb") << spec.name;
  }
}

TEST(MigCatalogTest, FindResolvesHardwareAliases) {
  auto hardware = HardwareCatalog::Embedded();
  ASSERT_TRUE(hardware) << hardware.error().message();
  const MigCatalog catalog = Embedded();
  auto h200 = catalog.Find("h200", *hardware);
  ASSERT_TRUE(h200) << h200.error().message();
  EXPECT_EQ((*h200)->name, "h200-141gb-sxm");
  auto nvl = catalog.Find("H100-NVL", *hardware);
  ASSERT_TRUE(nvl) << nvl.error().message();
  EXPECT_EQ((*nvl)->name, "h100-nvl-94gb");
  auto unknown = catalog.Find("v100", *hardware);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), core::Code::kNotFound);
}

TEST(MigCatalogTest, MinimalFileParses) {
  const SourceFile file{"ok.yaml", kMinimal};
  auto catalog = MigCatalog::FromFiles(std::span(&file, 1));
  ASSERT_TRUE(catalog) << catalog.error().message();
  EXPECT_EQ(catalog->gpus()[0].profiles[0].nvml_enum, "GPU_INSTANCE_PROFILE_1_SLICE");
}

TEST(MigCatalogTest, RejectsBadEntries) {
  struct Case {
    std::string from, to, message;
  };
  for (const Case& c : std::vector<Case>{
           {"kind: mig", "kind: gpu", "'gpu' is not mig"},
           {"GPU_INSTANCE_PROFILE_1_SLICE", "GPU_INSTANCE_PROFILE_9_SLICE", "not an NVML"},
           {"[0, 1, 2, 3, 4, 5, 6]", "[0, 1, 7, 8]", "start slot '8' is not in [0, 7]"},
           {"[0, 1, 2, 3, 4, 5, 6]", "[2, 1]", "ascending"},
           {"memory_slices: 1", "memory_slices: 9", "memory_slices"},
           {"max_instances: 7", "max_instances: 0", "max_instances"},
           {"short_name: 1g", "short_name: 1g+me", "\"+me\""},
           {"sm_count: 14", "sm_count: 14.5", "not a whole number"},
           {"ofa: 0}", "ofa: 0, nvdec: 1}", "nvdec"},
       }) {
    const core::Error error = ParseError<MigCatalog>(Replace(kMinimal, c.from, c.to));
    EXPECT_NE(error.message().find(c.message), std::string::npos)
        << c.to << " -> " << error.message();
  }
}

TEST(MigCatalogTest, RejectsDuplicateProfiles) {
  std::string text = kMinimal;
  text += text.substr(text.find("  - id: 19"));
  EXPECT_NE(ParseError<MigCatalog>(text).message().find("profile ID 19 appears twice"),
            std::string::npos);
}

}  // namespace
}  // namespace headroom::catalog
