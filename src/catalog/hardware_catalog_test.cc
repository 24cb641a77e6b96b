#include "catalog/hardware_catalog.h"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "catalog/testing/embedded_catalogs.h"
#include "core/files.h"

namespace headroom::catalog {
namespace {

std::string SourceDir() {
  const char* dir = std::getenv("HEADROOM_SOURCE_DIR");
  return dir != nullptr ? dir : ".";
}

std::string A100Text() {
  auto text = core::ReadFile(SourceDir() + "/data/hardware/a100-80gb-sxm.yaml");
  EXPECT_TRUE(text) << text.error().message();
  return text.value_or("");
}

// Replaces the first line starting with `key:` in `text` by `replacement`.
std::string ReplaceLine(std::string text, const std::string& key, const std::string& replacement) {
  const size_t pos = text.find("\n" + key + ":");
  EXPECT_NE(pos, std::string::npos) << key;
  const size_t end = text.find('\n', pos + 1);
  return text.substr(0, pos + 1) + replacement + text.substr(end);
}

using testing::ParseError;

TEST(HardwareCatalogTest, EmbeddedHasEveryRequiredType) {
  auto catalog = HardwareCatalog::Embedded();
  ASSERT_TRUE(catalog) << catalog.error().message();
  for (const char* gpu : {"a100-40gb-sxm", "a100-80gb-sxm", "h100-80gb-sxm", "h100-80gb-pcie",
                          "h200-141gb-sxm", "a100-80gb", "h100-80gb", "A100-80GB"}) {
    EXPECT_TRUE(catalog->Gpu(gpu)) << gpu;
  }
  for (const char* server : {"dgx-a100", "dgx-h100", "dgx-h200"}) {
    EXPECT_TRUE(catalog->Server(server)) << server;
  }
  EXPECT_EQ((*catalog->Gpu("h100-80gb"))->name, "h100-80gb-sxm");
}

TEST(HardwareCatalogTest, EmbeddedMatchesTheDataDirectory) {
  auto embedded = HardwareCatalog::Embedded();
  auto on_disk = HardwareCatalog::LoadDirectory(SourceDir() + "/data/hardware");
  ASSERT_TRUE(embedded && on_disk);
  ASSERT_EQ(embedded->gpus().size(), on_disk->gpus().size());
  for (size_t i = 0; i < embedded->gpus().size(); ++i) {
    EXPECT_EQ(embedded->gpus()[i].name, on_disk->gpus()[i].name);
    EXPECT_EQ(embedded->gpus()[i].tdp, on_disk->gpus()[i].tdp);
  }
  EXPECT_EQ(embedded->servers().size(), on_disk->servers().size());
}

TEST(HardwareCatalogTest, SpecSheetValues) {
  auto catalog = HardwareCatalog::Embedded();
  ASSERT_TRUE(catalog);
  const model::GpuSpec& a100 = **catalog->Gpu("a100-80gb-sxm");
  EXPECT_EQ(a100.tdp, core::Watts(400));
  EXPECT_EQ(a100.sm_clock_max, core::Megahertz(1410));
  EXPECT_EQ(a100.sm_clock_step, core::Megahertz(15));
  EXPECT_EQ(a100.idle_power, core::Watts(63));
  EXPECT_EQ(a100.brake_clock, core::Megahertz(288));
  EXPECT_EQ(a100.memory_bytes, 80ULL << 30);
  EXPECT_DOUBLE_EQ(a100.bf16_flops_per_s, 312e12);
  EXPECT_EQ(a100.sm_count, 108);
  const model::GpuSpec& h200 = **catalog->Gpu("h200");
  EXPECT_EQ(h200.tdp, core::Watts(700));
  EXPECT_DOUBLE_EQ(h200.memory_bandwidth_bytes_per_s, 4.8e12);
  EXPECT_TRUE(h200.sensor.classic_power_is_average);
  const model::ServerSpec& dgx = **catalog->Server("dgx-a100");
  EXPECT_EQ(dgx.gpus_per_server, 8);
  EXPECT_EQ(dgx.max_system_power, core::Watts(6500));
  EXPECT_EQ(catalog->GpuByNvmlName("NVIDIA A100-SXM4-80GB"), &a100);
}

TEST(HardwareCatalogTest, UnknownNameListsKnownOnes) {
  auto catalog = HardwareCatalog::Embedded();
  ASSERT_TRUE(catalog);
  auto gpu = catalog->Gpu("v100");
  ASSERT_FALSE(gpu);
  EXPECT_EQ(gpu.error().code(), core::Code::kNotFound);
  EXPECT_NE(gpu.error().message().find("unknown GPU type 'v100'"), std::string::npos);
  EXPECT_NE(gpu.error().message().find("a100-80gb-sxm"), std::string::npos);
}

TEST(HardwareCatalogTest, MalformedFilesNameFileAndField) {
  const std::string good = A100Text();
  EXPECT_EQ(ParseError<HardwareCatalog>(ReplaceLine(good, "tdp_w", "tdp_w: lots")).message(),
            "bad.yaml:11: field 'tdp_w': expected a number");
  EXPECT_NE(ParseError<HardwareCatalog>(ReplaceLine(good, "tdp_w", "tdpw: 400"))
                .message()
                .find("field 'tdpw': unknown field"),
            std::string::npos);
  EXPECT_NE(ParseError<HardwareCatalog>(ReplaceLine(good, "tdp_w", ""))
                .message()
                .find("field 'tdp_w': missing"),
            std::string::npos);
  EXPECT_NE(
      ParseError<HardwareCatalog>(
          ReplaceLine(good, "power_limit_w", "power_limit_w: {min: 100, max: 400, default: 500}"))
          .message()
          .find("field 'power_limit_w.default': 500 is outside [100, 400]"),
      std::string::npos);
  EXPECT_NE(ParseError<HardwareCatalog>(ReplaceLine(good, "kind", "kind: cpu"))
                .message()
                .find("neither gpu"),
            std::string::npos);
  EXPECT_NE(ParseError<HardwareCatalog>("kind: gpu\nname: [unclosed\n").message().find("bad.yaml:"),
            std::string::npos);
}

TEST(HardwareCatalogTest, CrossFileErrors) {
  const std::string gpu = A100Text();
  const std::vector<SourceFile> dup = {{"one.yaml", gpu}, {"two.yaml", gpu}};
  auto catalog = HardwareCatalog::FromFiles(dup);
  ASSERT_FALSE(catalog);
  EXPECT_NE(catalog.error().message().find("two.yaml: name or alias 'a100-80gb-sxm' is already "
                                           "used by one.yaml"),
            std::string::npos);

  const std::vector<SourceFile> orphan = {
      {"gpu.yaml", gpu},
      {"server.yaml",
       "kind: server\nname: box\ngpu: v100\ngpus_per_server: 8\nnon_gpu_power_w: 1\n"
       "max_system_power_w: 9000\n"}};
  catalog = HardwareCatalog::FromFiles(orphan);
  ASSERT_FALSE(catalog);
  EXPECT_NE(catalog.error().message().find("server 'box': unknown GPU type 'v100'"),
            std::string::npos);
}

TEST(HardwareCatalogTest, NonGpuIdlePowerIsOptionalAndBounded) {
  const std::string gpu = A100Text();
  const auto server = [](const std::string& idle) {
    return "kind: server\nname: box\ngpu: a100-80gb-sxm\ngpus_per_server: 8\n"
           "non_gpu_power_w: 3300\n" +
           idle + "max_system_power_w: 6500\n";
  };
  auto constant = HardwareCatalog::FromFiles(
      std::vector<SourceFile>{{"gpu.yaml", gpu}, {"server.yaml", server("")}});
  ASSERT_TRUE(constant) << constant.error().message();
  EXPECT_EQ((*constant->Server("box"))->non_gpu_idle_power, core::Watts(3300));
  auto rising = HardwareCatalog::FromFiles(std::vector<SourceFile>{
      {"gpu.yaml", gpu}, {"server.yaml", server("non_gpu_idle_w: 2966\n")}});
  ASSERT_TRUE(rising) << rising.error().message();
  EXPECT_EQ((*rising->Server("box"))->non_gpu_idle_power, core::Watts(2966));
  auto above = HardwareCatalog::FromFiles(std::vector<SourceFile>{
      {"gpu.yaml", gpu}, {"server.yaml", server("non_gpu_idle_w: 3400\n")}});
  ASSERT_FALSE(above);
  EXPECT_NE(above.error().message().find(
                "server.yaml:6: field 'non_gpu_idle_w': 3400 W must be in [0, non_gpu_power_w"),
            std::string::npos)
      << above.error().message();
}

TEST(HardwareCatalogTest, MissingDirectoryIsAClearError) {
  auto catalog = HardwareCatalog::LoadDirectory("/nonexistent/headroom");
  ASSERT_FALSE(catalog);
  EXPECT_NE(catalog.error().message().find("/nonexistent/headroom"), std::string::npos);
}

}  // namespace
}  // namespace headroom::catalog
