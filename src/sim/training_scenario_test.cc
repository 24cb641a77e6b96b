#include "sim/training_scenario.h"

#include <gtest/gtest.h>

#include "sim/scenario.h"

namespace headroom::sim {
namespace {

class TrainingScenarioTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto hardware = catalog::HardwareCatalog::Embedded();
    auto workloads = catalog::TrainingCatalog::Embedded();
    ASSERT_TRUE(hardware && workloads);
    hardware_ = std::move(*hardware);
    workloads_ = std::move(*workloads);
  }

  core::Result<TrainingScenario> Parse(const std::string& text) {
    return ParseTrainingScenario(text, "t.yaml", hardware_, workloads_);
  }

  static std::string Minimal(const std::string& workload_extra = "",
                             const std::string& extra = "") {
    return "kind: training-row\nname: t\nrow:\n  server: dgx-a100\n  servers: 2\n"
           "workload:\n  training: gpt-neox-20b\n" +
           workload_extra + "mitigations:\n  - {kind: none}\n" + extra;
  }

  catalog::HardwareCatalog hardware_;
  catalog::TrainingCatalog workloads_;
};

TEST_F(TrainingScenarioTest, TheBuiltInTrainingRowParses) {
  auto file = ReadScenarioFile("training-a100-row");
  ASSERT_TRUE(file) << file.error().message();
  EXPECT_EQ(*ScenarioKindOf(file->text, file->source), kTrainingRowKind);
  auto s = ParseTrainingScenario(file->text, file->source, hardware_, workloads_);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->servers, 40);
  EXPECT_EQ(s->checkpoint_every, std::chrono::minutes(30));
  EXPECT_EQ(s->mitigations.size(), 6u);
  EXPECT_EQ(s->mitigations[3].name, "smoothing 60% 100/100 W/s 1s");
  EXPECT_EQ(s->mitigations[1].kind, MitigationKind::kClockLock);
  EXPECT_EQ(s->mitigations[3].kind, MitigationKind::kPowerSmoothing);
  EXPECT_EQ(s->mitigations[3].ramp_down_hysteresis, std::chrono::seconds(1));
  ASSERT_TRUE(s->limits.max_ramp_w_per_s);
  // An inference row's parser refuses it, saying who runs it.
  auto as_row = LoadScenario("training-a100-row");
  ASSERT_FALSE(as_row);
  SCOPED_TRACE(as_row.error().message());
  EXPECT_NE(as_row.error().message().find("simulate"), std::string::npos);
}

TEST_F(TrainingScenarioTest, BadInputIsOneErrorNamingFileLineAndField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Minimal("  colour: red\n"), "t.yaml:8: field 'workload.colour'"},
      {Minimal("  checkpoint_every: 30 minutes\n  checkpoint_for: 1m\n"),
       "t.yaml:8: field 'workload.checkpoint_every'"},
      {Minimal("  checkpoint_every: 30m\n"), "checkpoint_every and checkpoint_for go together"},
      {"kind: training-row\nname: t\nrow:\n  server: dgx-a100\n  servers: 2\nworkload:\n"
       "  training: gpt-5\nmitigations:\n  - {kind: none}\n",
       "t.yaml:7: field 'workload.training'"},
      {Minimal("",
               "  - {kind: power-smoothing, floor_pct: 50, ramp_up_w_per_s: 0, "
               "ramp_down_w_per_s: 10}\n"),
       "t.yaml:10: field 'mitigations[1].ramp_up_w_per_s': a ramp limit of 0"},
      {Minimal("", "  - {kind: throttle}\n"), "field 'mitigations[1].kind': unknown mitigation"},
      {Minimal("", "  - {kind: clock-lock, clock_mhz: 5000}\n"),
       "field 'mitigations[1].clock_mhz'"},
      {Minimal("", "grid:\n  max_ramp_w_per_s: 0\n"), "field 'grid.max_ramp_w_per_s'"},
      {Minimal("", "simulation:\n  step: 50ms\n"), "3-30 Hz"},
      {"kind: training-row\nname: t\nrow:\n  server: dgx-a100\n  servers: 2\nworkload:\n"
       "  training: gpt-neox-20b\nmitigations:\n  - {kind: clock-lock, clock_mhz: 1200}\n",
       "must list `{kind: none}` first"},
  };
  for (const auto& [text, expected] : cases) {
    auto s = Parse(text);
    ASSERT_FALSE(s) << text;
    EXPECT_NE(s.error().message().find(expected), std::string::npos)
        << s.error().message() << "\nexpected: " << expected;
  }
}

}  // namespace
}  // namespace headroom::sim
