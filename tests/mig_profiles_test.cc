// `headroom mig show --profiles` as a user runs it: the driver's GPU-instance profiles (through
// the fake libnvidia-ml.so.1, MIG mode off as on a fresh GPU) and the sim backend's, against the
// MIG catalog; the fake's HEADROOM_FAKE_NVML_MIG_PERTURB makes the driver disagree.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "headroom_command.h"

namespace {

using headroom::testing::CommandRun;
using headroom::testing::Contains;
using headroom::testing::Headroom;

// The last non-empty line of `text`.
std::string LastLine(const std::string& text) {
  const size_t end = text.find_last_not_of('\n');
  if (end == std::string::npos) return "";
  const size_t begin = text.rfind('\n', end);
  return text.substr(begin == std::string::npos ? 0 : begin + 1,
                     end - (begin == std::string::npos ? 0 : begin + 1) + 1);
}

// One fake A100-80GB, MIG mode off; `extra` adds variables.
std::string Env(const std::string& extra = "") {
  return fmt::format("HEADROOM_NVML_LIBRARY={} HEADROOM_FAKE_NVML_COUNT=1 {}", FAKE_NVML, extra);
}

TEST(MigProfilesTest, DriverTableMatchesTheCatalogWithMigModeOff) {
  const CommandRun run = Headroom("mig show --profiles --backend nvml", Env());
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(Contains(run.out,
                       "GPU 0 (NVIDIA A100-SXM4-80GB): MIG disabled; driver's profiles "
                       "vs catalog a100-80gb-sxm"))
      << run.out;
  EXPECT_TRUE(
      Contains(run.out, "PROFILE     NVML  ID  SLICES  SMS  MEMORY_GIB  CE/DEC/ENC/JPG/OFA"))
      << run.out;
  EXPECT_TRUE(Contains(run.out, "3g.40gb      0x2   9       3   42       38.00")) << run.out;
  EXPECT_TRUE(Contains(run.out, "0:4,4:4")) << run.out;
  EXPECT_TRUE(Contains(run.out, "0:1,1:1,2:1,3:1,4:1,5:1,6:1")) << run.out;
  EXPECT_EQ(LastLine(run.out), "match: all 7 profiles agree with the catalog (1 GPU)") << run.out;
}

TEST(MigProfilesTest, JsonHasDriverAndCatalogPerProfile) {
  const CommandRun run = Headroom("mig show --profiles --backend nvml --json", Env());
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto json = nlohmann::json::parse(run.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << run.out;
  EXPECT_EQ(json["gpu"]["index"], 0);
  EXPECT_EQ(json["gpu"]["mig"]["current"], false);
  EXPECT_EQ(json["catalog"], "a100-80gb-sxm");
  EXPECT_EQ(json["match"], true);
  ASSERT_EQ(json["profiles"].size(), 7u);
  for (const auto& row : json["profiles"]) {
    EXPECT_EQ(row["verdict"], "ok") << row.dump();
    EXPECT_EQ(row["driver"]["id"], row["catalog"]["id"]) << row.dump();
  }
  const auto& seven = json["profiles"][6];
  EXPECT_EQ(seven["name"], "7g.80gb");
  EXPECT_EQ(seven["driver"]["name"], "MIG 7g.80gb");
  EXPECT_EQ(seven["driver"]["nvml_profile"], 4);
  EXPECT_EQ(seven["driver"]["slices"], 7);
  EXPECT_EQ(seven["driver"]["sm_count"], 98);
  EXPECT_EQ(seven["driver"]["memory_bytes"], 76ULL << 30);
  EXPECT_EQ(seven["driver"]["max_instances"], 1);
  EXPECT_EQ(seven["driver"]["placements"], nlohmann::json::parse(R"([{"start":0,"size":8}])"));
  EXPECT_EQ(seven["catalog"]["nvml_enum"], "GPU_INSTANCE_PROFILE_7_SLICE");
}

TEST(MigProfilesTest, ADifferingDriverIsAMismatchNamingTheDifference) {
  const CommandRun run = Headroom(
      "mig show --profiles --backend nvml",
      Env("HEADROOM_FAKE_NVML_MIG_PERTURB=9:sms=43,0:memory_mib=71424,19:absent,14:starts=0/2"));
  ASSERT_EQ(run.exit_code, 1) << run.out;
  EXPECT_TRUE(Contains(run.out, "SMs 43 vs catalog 42")) << run.out;
  EXPECT_TRUE(Contains(run.out, "43 vs 42")) << run.out;  // the SMS cell
  EXPECT_TRUE(Contains(run.out, "memory 69.75 GiB vs catalog 76.00")) << run.out;
  EXPECT_TRUE(Contains(run.out, "not listed by the driver")) << run.out;
  EXPECT_TRUE(Contains(run.out, "placements 0:2,2:2 vs catalog 0:2,2:2,4:2")) << run.out;
  EXPECT_EQ(LastLine(run.out),
            "MISMATCH: 4 of 7 profiles differ from the catalog: GPU 0 1g.10gb, GPU 0 2g.20gb, "
            "GPU 0 3g.40gb, GPU 0 7g.80gb")
      << run.out;
  const CommandRun json_run = Headroom("mig show --profiles --backend nvml --json",
                                       Env("HEADROOM_FAKE_NVML_MIG_PERTURB=5:copy=3"));
  ASSERT_EQ(json_run.exit_code, 1) << json_run.out;
  const auto json = nlohmann::json::parse(json_run.out, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << json_run.out;
  EXPECT_EQ(json["match"], false);
  EXPECT_EQ(json["profiles"][5]["name"], "4g.40gb");
  EXPECT_EQ(json["profiles"][5]["verdict"],
            "engines CE/DEC/ENC/JPG/OFA 3/2/0/0/0 vs catalog 4/2/0/0/0");
}

TEST(MigProfilesTest, TheSimBackendListsTheCatalog) {
  const CommandRun run = Headroom("mig show --profiles --sim-gpu h200 --sim-count 2");
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(Contains(run.out, "GPU 1 (")) << run.out;
  EXPECT_TRUE(Contains(run.out, "3g.71gb")) << run.out;
  EXPECT_EQ(LastLine(run.out), "match: all 14 profiles agree with the catalog (2 GPUs)") << run.out;
  const CommandRun json_run = Headroom("mig show --profiles --sim-gpu h200 --sim-count 2 --json");
  ASSERT_EQ(json_run.exit_code, 0) << json_run.out;
  const auto json = nlohmann::json::parse(json_run.out, nullptr, false);
  ASSERT_TRUE(json.is_array()) << json_run.out;  // several GPUs: one object each
  EXPECT_EQ(json.size(), 2u);
  EXPECT_EQ(json[1]["catalog"], "h200-141gb-sxm");
}

TEST(MigProfilesTest, UsageErrorsExitTwo) {
  EXPECT_EQ(Headroom("mig show --profiles --no-such-flag").exit_code, 2);
  EXPECT_EQ(Headroom("mig show --profiles --backend nvml --gpus 7", Env()).exit_code, 2);
}

}  // namespace
