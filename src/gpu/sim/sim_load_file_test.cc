#include "gpu/sim/sim_load_file.h"

#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "catalog/testing/embedded_catalogs.h"

namespace headroom::gpu::sim {
namespace {

void WriteText(const std::string& path, const std::string& text,
               std::filesystem::file_time_type when) {
  std::ofstream(path, std::ios::trunc) << text;
  std::filesystem::last_write_time(path, when);
}

TEST(SimLoadFileTest, AppliesAScriptWhenTheFileChangesAndKeepsTheLastGoodOne) {
  const std::string path = ::testing::TempDir() + "headroom_sim_load_file_test";
  const auto t0 = std::filesystem::file_time_type::clock::now();
  WriteText(path, "decode\n", t0);
  core::FakeClock clock;
  SimDevice device(0, catalog::testing::A100(), &clock, {});
  SimLoadFile file(path, {&device});
  auto first = file.Poll();
  ASSERT_TRUE(first) << first.error().message();
  EXPECT_EQ(*first, std::optional<std::string>("decode"));
  auto unchanged = file.Poll();
  ASSERT_TRUE(unchanged);
  EXPECT_FALSE(*unchanged);
  WriteText(path, "bogus:xyz", t0 + std::chrono::seconds(1));
  auto bad = file.Poll();
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message().find("--sim-load-file " + path), std::string::npos);
  auto after_bad = file.Poll();  // reported once per change
  ASSERT_TRUE(after_bad);
  EXPECT_FALSE(*after_bad);
  WriteText(path, "prefill", t0 + std::chrono::seconds(2));
  auto next = file.Poll();
  ASSERT_TRUE(next);
  EXPECT_EQ(*next, std::optional<std::string>("prefill"));
  std::filesystem::remove(path);
  auto gone = file.Poll();
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code(), core::Code::kNotFound);
}

}  // namespace
}  // namespace headroom::gpu::sim
