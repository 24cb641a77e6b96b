#include "report/simulate_dir.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/files.h"
#include "core/testing/fresh_dir.h"
#include "report/simulation_report.h"
#include "report/testing/every_field.h"

namespace headroom::report {
namespace {

// A simulate directory as `simulate --out --report` writes it: summary.json (the run, its
// arrival span, the inputs and the uncapped run) and the CSV files beside it.
std::string WriteSimulateDir(const std::string& name, const SimulateInputs& inputs,
                             const sim::RunSummary& run, const sim::RunSummary& uncapped) {
  const std::string dir = core::testing::FreshDir(name);
  std::filesystem::create_directories(dir);
  nlohmann::ordered_json j = RunJson(run);
  j["duration_s"] = 3600.5;
  j["inputs"] = SimulateInputsJson(inputs);
  j["uncapped"] = RunJson(uncapped);
  EXPECT_TRUE(core::WriteFileAtomically(dir + "/summary.json", j.dump(2)));
  std::ofstream(dir + "/power.csv") << "time_s,row_w,row_frac,state\n0,100,0.5,normal\n"
                                       "1,120,0.6,brake\n";
  for (const char* file : {"/requests.csv", "/uncapped-requests.csv"}) {
    std::ofstream(dir + file) << "arrival_s,priority,ttft_s,e2e_s\n0,hp,0.1,1\n1,lp,0.2,2\n";
  }
  return dir;
}

// Issue 46: summary.json's inputs and runs are written and read through one field table each.
// Every member is set by name to its own value and compared by name after the round trip, so an
// entry dropped from a table fails this test.
TEST(SimulateDirTest, EveryFieldReadsBack) {
  const SimulateInputs inputs{.scenario = "scenario-x",
                              .description = "a description",
                              .scenario_source = "row.yaml",
                              .trace = "trace.csv",
                              .seed = 77,
                              .policy = "polca",
                              .servers = 48,
                              .provisioned_servers = 40,
                              .version = "9.9.9",
                              .overrides = {"t1=0.8"},
                              .t1_frac = 0.81,
                              .t2_frac = 0.91};
  const sim::RunSummary run = testing::EveryFieldRun(1);
  const sim::RunSummary uncapped = testing::EveryFieldRun(2);
  auto read = ReadSimulateDir(WriteSimulateDir("every_field", inputs, run, uncapped));
  ASSERT_TRUE(read) << read.error().message();
  const SimulateInputs& in = read->inputs;
  EXPECT_EQ(in.scenario, inputs.scenario);
  EXPECT_EQ(in.description, inputs.description);
  EXPECT_EQ(in.scenario_source, inputs.scenario_source);
  EXPECT_EQ(in.trace, inputs.trace);
  EXPECT_EQ(in.seed, inputs.seed);
  EXPECT_EQ(in.policy, inputs.policy);
  EXPECT_EQ(in.servers, inputs.servers);
  EXPECT_EQ(in.provisioned_servers, inputs.provisioned_servers);
  EXPECT_EQ(in.version, inputs.version);
  EXPECT_EQ(in.overrides, inputs.overrides);
  EXPECT_EQ(in.t1_frac, inputs.t1_frac);
  EXPECT_EQ(in.t2_frac, inputs.t2_frac);
  testing::ExpectSameRun(read->run, run, "run");
  EXPECT_EQ(read->duration_s, 3600.5);
  ASSERT_TRUE(read->uncapped);
  testing::ExpectSameRun(*read->uncapped, uncapped, "uncapped");
  EXPECT_EQ(read->power.brake_s, std::vector<double>{1});
  EXPECT_EQ(read->requests.hp_e2e_s, std::vector<double>{1});
  ASSERT_TRUE(read->uncapped_requests);
  EXPECT_EQ(read->uncapped_requests->lp_ttft_s, std::vector<double>{0.2});
}

TEST(SimulateDirTest, ErrorsNameTheFileAndField) {
  const std::string dir = WriteSimulateDir("bad", SimulateInputs{}, testing::EveryFieldRun(1),
                                           testing::EveryFieldRun(2));
  auto j = nlohmann::json::parse(*core::ReadFile(dir + "/summary.json"));
  j["uncapped"]["hp"]["requests"] = -1;
  ASSERT_TRUE(core::WriteFileAtomically(dir + "/summary.json", j.dump()));
  auto read = ReadSimulateDir(dir);
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().message(),
            dir +
                "/summary.json: field 'uncapped.hp.requests' is -1 (expected a count from 0 to "
                "18446744073709551615; the file `headroom simulate --out` writes)");
}

}  // namespace
}  // namespace headroom::report
