// `headroom mig show` and `headroom mig apply` as a user runs them, against the fake
// libnvidia-ml.so.1 (MIG state carried between processes in a state file) and the sim backend:
// output, JSON, exit codes, refusals, and the rollback after a failed step.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "headroom_command.h"

namespace {

using headroom::testing::CommandRun;
using headroom::testing::Contains;
using headroom::testing::Headroom;

class MigApplyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
    state_ = std::filesystem::temp_directory_path() /
             fmt::format("headroom-mig-{}-{}.state", test->name(), ::getpid());
    std::filesystem::remove(state_);
  }
  void TearDown() override { std::filesystem::remove(state_); }

  // One A100 through the fake NVML with MIG on, the state kept in state_; `extra` adds
  // variables ("HEADROOM_FAKE_NVML_MIG_LAYOUT=..."), read only by the first process.
  std::string Env(const std::string& extra = "") const {
    return fmt::format(
        "HEADROOM_NVML_LIBRARY={} HEADROOM_FAKE_NVML_COUNT=1 HEADROOM_FAKE_NVML_MIG=1 "
        "HEADROOM_FAKE_NVML_MIG_STATE={} {}",
        FAKE_NVML, state_.string(), extra);
  }

  // The layout `mig show --json` reports for GPU 0 through the fake NVML.
  std::string ShownLayout() const {
    const CommandRun run = Headroom("mig show --backend nvml --json", Env());
    EXPECT_EQ(run.exit_code, 0) << run.out;
    auto json = nlohmann::json::parse(run.out, nullptr, false);
    if (json.is_discarded() || !json["gpus"][0].contains("layout")) return "unparsed: " + run.out;
    return json["gpus"][0]["layout"].get<std::string>();
  }

  std::filesystem::path state_;
};

TEST_F(MigApplyTest, ShowPrintsModeLayoutAndInstances) {
  const CommandRun run =
      Headroom("mig show --backend nvml",
               Env("HEADROOM_FAKE_NVML_MIG_LAYOUT=1g.10gb@6,3g.40gb@0/2c+1c,2g.20gb@4"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(Contains(run.out, "GPU 0 (NVIDIA A100-SXM4-80GB, a100-80gb-sxm): MIG enabled"))
      << run.out;
  EXPECT_TRUE(Contains(run.out, "layout: 3g.40gb@0/2c+1c,2g.20gb@4,1g.10gb@6")) << run.out;
  EXPECT_TRUE(Contains(run.out, "GI  PROFILE  SLICES  SMS  MEMORY_GIB  CI  CI_SLICES")) << run.out;
  EXPECT_TRUE(Contains(run.out, " 3g.40gb     0-3   42")) << run.out;
  EXPECT_TRUE(Contains(run.out, "MIG-")) << run.out;
}

TEST_F(MigApplyTest, ShowJsonHasEveryInstance) {
  const CommandRun run = Headroom("mig show --backend nvml --json",
                                  Env("HEADROOM_FAKE_NVML_MIG_LAYOUT=4g.40gb@0,3g.40gb@4/2c+1c"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["backend"], "nvml");
  const auto& gpu = json["gpus"][0];
  EXPECT_EQ(gpu["type"], "a100-80gb-sxm");
  EXPECT_EQ(gpu["mig"]["current"], true);
  EXPECT_EQ(gpu["layout"], "4g.40gb@0,3g.40gb@4/2c+1c");
  ASSERT_EQ(gpu["instances"].size(), 2u);
  EXPECT_EQ(gpu["instances"][1]["profile"], "3g.40gb");
  EXPECT_EQ(gpu["instances"][1]["profile_id"], 9);
  EXPECT_EQ(gpu["instances"][1]["compute_instances"].size(), 2u);
  EXPECT_EQ(gpu["instances"][1]["compute_instances"][0]["uuid"].get<std::string>().rfind("MIG-", 0),
            0u);
}

TEST_F(MigApplyTest, ApplyThenShowInAnotherProcess) {
  const CommandRun run = Headroom("mig apply 3g.40gb@4,3g.40gb@0 --backend nvml --gpus 0",
                                  Env("HEADROOM_FAKE_NVML_MIG_LAYOUT=7g.80gb@0"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(Contains(run.out, "GPU 0: 7g.80gb@0 -> 3g.40gb@0,3g.40gb@4")) << run.out;
  EXPECT_TRUE(Contains(run.out,
                       "plan (6 steps):\n"
                       "   1. destroy compute instance 0 (7c) of 7g.80gb@0\n"
                       "   2. destroy 7g.80gb@0 (GPU instance 1)\n"
                       "   3. create 3g.40gb@0\n"
                       "   4. create 3g.40gb@4\n"))
      << run.out;
  EXPECT_TRUE(Contains(run.out, "applied: 3g.40gb@0,3g.40gb@4")) << run.out;
  EXPECT_EQ(ShownLayout(), "3g.40gb@0,3g.40gb@4");
  // Applying it again changes nothing.
  const CommandRun again = Headroom("mig apply 3g.40gb@0,3g.40gb@4 --backend nvml", Env());
  ASSERT_EQ(again.exit_code, 0) << again.out;
  EXPECT_TRUE(Contains(again.out, "already in place; nothing to do")) << again.out;
}

TEST_F(MigApplyTest, DryRunPrintsThePlanAndChangesNothing) {
  const CommandRun run =
      Headroom("mig apply 2g.20gb@0,2g.20gb@2,3g.40gb@4 --backend nvml --dry-run",
               Env("HEADROOM_FAKE_NVML_MIG_LAYOUT=3g.40gb@0,3g.40gb@4"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(Contains(run.out, "create 2g.20gb@0")) << run.out;
  EXPECT_TRUE(Contains(run.out, "dry run: nothing changed")) << run.out;
  EXPECT_FALSE(Contains(run.out, "destroy 3g.40gb@4")) << run.out;  // kept
  EXPECT_EQ(ShownLayout(), "3g.40gb@0,3g.40gb@4");
}

TEST_F(MigApplyTest, AFailedCreateRollsBackToTheOriginalLayout) {
  const std::string original = "4g.40gb@0/2c+1c,2g.20gb@4,1g.10gb@6";
  // Steps: 4 compute and 3 GPU instances destroyed, then 3g@0 created; the 2nd create fails.
  const CommandRun run = Headroom(
      "mig apply 3g.40gb@0,3g.40gb@4 --backend nvml",
      Env("HEADROOM_FAKE_NVML_MIG_LAYOUT=" + original + " HEADROOM_FAKE_NVML_MIG_FAIL_CREATE=2"));
  ASSERT_EQ(run.exit_code, 1) << run.out;
  EXPECT_TRUE(Contains(run.out, "headroom: create 3g.40gb@4 failed: GPU 0: ")) << run.out;
  EXPECT_TRUE(Contains(run.out, "(NVML_ERROR_INSUFFICIENT_RESOURCES)")) << run.out;
  EXPECT_TRUE(Contains(run.out, "; rolled back to " + original)) << run.out;
  EXPECT_FALSE(Contains(run.out, "applied:")) << run.out;
  EXPECT_EQ(ShownLayout(), original);
}

TEST_F(MigApplyTest, ApplyJsonReportsTheFailureAndRollback) {
  const CommandRun run = Headroom("mig apply 7g.80gb@0 --backend nvml --json",
                                  Env("HEADROOM_FAKE_NVML_MIG_LAYOUT=3g.40gb@0,3g.40gb@4 "
                                      "HEADROOM_FAKE_NVML_MIG_FAIL_CREATE=1"));
  ASSERT_EQ(run.exit_code, 1) << run.out;
  // The error line (stderr, unbuffered) and the JSON (stdout) arrive in either order.
  const std::string json_text =
      run.out.substr(run.out.find('{'), run.out.rfind('}') - run.out.find('{') + 1);
  const auto json = nlohmann::json::parse(json_text, nullptr, false);
  ASSERT_FALSE(json.is_discarded()) << run.out;
  const auto& gpu = json["gpus"][0];
  EXPECT_EQ(gpu["ok"], false);
  EXPECT_EQ(gpu["rolled_back"], true);
  EXPECT_EQ(gpu["after"], "3g.40gb@0,3g.40gb@4");
  EXPECT_EQ(gpu["done"], 4);  // 2 compute and 2 GPU instances destroyed
  EXPECT_TRUE(Contains(gpu["error"].get<std::string>(), "create 7g.80gb@0")) << run.out;
}

TEST_F(MigApplyTest, RefusesWhileProcessesRunAndForceStillMeetsInUse) {
  const std::string env =
      Env("HEADROOM_FAKE_NVML_MIG_LAYOUT=3g.40gb@0,3g.40gb@4 HEADROOM_FAKE_NVML_PROCESSES=4242:1");
  const CommandRun refused = Headroom("mig apply 7g.80gb@0 --backend nvml", env);
  ASSERT_EQ(refused.exit_code, 1) << refused.out;
  EXPECT_TRUE(Contains(refused.out, "running compute processes: 4242 (GPU instance 1)"))
      << refused.out;
  EXPECT_TRUE(Contains(refused.out, "--force")) << refused.out;
  // Forced: the driver refuses to destroy the busy instance, and nothing is left changed.
  const CommandRun forced = Headroom("mig apply 7g.80gb@0 --backend nvml --force", env);
  ASSERT_EQ(forced.exit_code, 1) << forced.out;
  EXPECT_TRUE(Contains(forced.out, "NVML_ERROR_IN_USE")) << forced.out;
  EXPECT_EQ(ShownLayout(), "3g.40gb@0,3g.40gb@4");
  // Forced, a layout that keeps the busy instance goes through.
  const CommandRun kept =
      Headroom("mig apply 3g.40gb@0,2g.20gb@4,1g.10gb@6 --backend nvml --force", env);
  ASSERT_EQ(kept.exit_code, 0) << kept.out;
  EXPECT_EQ(ShownLayout(), "3g.40gb@0,2g.20gb@4,1g.10gb@6");
}

TEST_F(MigApplyTest, WithoutRootTheNvmlErrorIsNamedAndNothingChanges) {
  const CommandRun run =
      Headroom("mig apply 7g.80gb@0 --backend nvml",
               Env("HEADROOM_FAKE_NVML_MIG_LAYOUT=3g.40gb@0 HEADROOM_FAKE_NVML_NOT_ROOT=1"));
  ASSERT_EQ(run.exit_code, 1) << run.out;
  EXPECT_TRUE(Contains(run.out, "NVML_ERROR_NO_PERMISSION")) << run.out;
  EXPECT_EQ(ShownLayout(), "3g.40gb@0");
}

TEST_F(MigApplyTest, MigDisabledIsAClearRefusal) {
  const std::string env = fmt::format(
      "HEADROOM_NVML_LIBRARY={} HEADROOM_FAKE_NVML_COUNT=1 HEADROOM_FAKE_NVML_MIG_STATE={}",
      FAKE_NVML, state_.string());
  const CommandRun show = Headroom("mig show --backend nvml", env);
  ASSERT_EQ(show.exit_code, 0) << show.out;
  EXPECT_TRUE(Contains(show.out, "a100-80gb-sxm): MIG disabled")) << show.out;
  const CommandRun apply = Headroom("mig apply 7g.80gb@0 --backend nvml", env);
  ASSERT_EQ(apply.exit_code, 1) << apply.out;
  EXPECT_TRUE(Contains(apply.out,
                       "headroom: GPU 0: MIG mode is disabled; enable it as root with "
                       "'nvidia-smi -i 0 -mig 1'"))
      << apply.out;
}

TEST_F(MigApplyTest, InvalidLayoutsAreUsageErrorsNamingTheInstance) {
  const CommandRun overlap = Headroom("mig apply 4g.40gb@0,2g.20gb@2 --backend nvml", Env());
  ASSERT_EQ(overlap.exit_code, 2) << overlap.out;
  EXPECT_TRUE(Contains(overlap.out, "'2g.20gb@2' overlaps '4g.40gb@0' on memory slices 2-3"))
      << overlap.out;
  const CommandRun foreign = Headroom("mig apply 3g.71gb@0 --backend nvml", Env());
  ASSERT_EQ(foreign.exit_code, 2) << foreign.out;
  EXPECT_TRUE(Contains(foreign.out, "profile 3g.71gb is not supported on a100-80gb-sxm"))
      << foreign.out;
  const CommandRun malformed = Headroom("mig apply 3g@x --backend nvml", Env());
  EXPECT_EQ(malformed.exit_code, 2) << malformed.out;
  EXPECT_EQ(ShownLayout(), "");
}

TEST_F(MigApplyTest, TheSimBackendAppliesAndShows) {
  const CommandRun apply =
      Headroom("mig apply 1g.18gb@0,1g.18gb@1,2g.35gb@2,3g.71gb@4 --sim-gpu h200 --sim-count 2");
  ASSERT_EQ(apply.exit_code, 0) << apply.out;
  EXPECT_TRUE(Contains(apply.out, "GPU 0: (none) -> 1g.18gb@0,1g.18gb@1,2g.35gb@2,3g.71gb@4"))
      << apply.out;
  EXPECT_TRUE(Contains(apply.out, "GPU 1: (none) ->")) << apply.out;
  EXPECT_TRUE(Contains(apply.out, "applied: 1g.18gb@0,1g.18gb@1,2g.35gb@2,3g.71gb@4")) << apply.out;
  const CommandRun show = Headroom("mig show --sim-gpu h200 --sim-count 1");
  ASSERT_EQ(show.exit_code, 0) << show.out;
  EXPECT_TRUE(Contains(show.out, "h200-141gb-sxm): MIG enabled\nlayout: (no instances)"))
      << show.out;
}

}  // namespace
