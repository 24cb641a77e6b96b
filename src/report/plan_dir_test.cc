#include "report/plan_dir.h"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "core/files.h"
#include "core/testing/fresh_dir.h"
#include "report/testing/every_field.h"
#include "report/testing/sample_plan.h"

namespace headroom::report {
namespace {

using core::testing::FreshDir;

TEST(PlanDirTest, WhatIsWrittenReadsBackTheSame) {
  const std::string dir = FreshDir("round_trip");
  const PlanReport written = testing::SamplePlanReport();
  ASSERT_TRUE(WritePlanDir(dir, written));
  auto read = ReadPlanDir(dir);
  ASSERT_TRUE(read) << read.error().message();
  // The same report, so the same JSON (every field of every struct is in it).
  EXPECT_EQ(PlanReportJson(*read).dump(), PlanReportJson(written).dump());
  ASSERT_TRUE(read->power);
  EXPECT_EQ(read->power->windows.size(), 10u);
  EXPECT_DOUBLE_EQ(read->power->windows[9].max_w, 198'000);
  EXPECT_EQ(read->inputs.description, written.inputs.description);
}

// Issue 46: plan.json's writer and reader share one field table. Every member is set here by
// name to its own value and compared by name after the round trip, so an entry dropped from the
// table (from writer and reader at once) fails this test.
PlanReport EveryFieldPlan() {
  PlanReport r;
  sim::CapacityPlan& plan = r.plan;
  plan.baseline_servers = 41;
  plan.risk_beyond = 3;
  plan.baseline = testing::EveryFieldRun(1);
  plan.planning_weeks = 2;
  plan.validation_weeks = 1;
  plan.max_weekly_risk = 0.03;
  plan.confidence = 0.9;
  plan.stress_cases = {"stress a", "stress b"};
  plan.week_seeds = {11, 12, 13, 14, 15};
  sim::PolicyPlan polca{.policy = "polca",
                        .max_servers = 44,
                        .extra_pct = 7.5,
                        .at_max = testing::EveryFieldRun(2),
                        .impact = {.hp_p50_e2e_pct = 0.1,
                                   .hp_p99_e2e_pct = 0.2,
                                   .lp_p50_e2e_pct = 0.3,
                                   .lp_p99_e2e_pct = 0.4,
                                   .hp_throughput_pct = -0.5,
                                   .lp_throughput_pct = -0.6},
                        .limit = "HP P99",
                        .searched_servers = 45,
                        .validated_weeks = 1,
                        .validation_failure = "1 of 1 unseen weeks failed"};
  sim::PolicyPlan none;  // fails even at the provisioned row: no run
  none.policy = "none";
  none.limit = "brake events";
  plan.policies = {polca, none};
  plan.simulations = 17;
  plan.runs = {testing::EveryFieldRun(3), testing::EveryFieldRun(4)};
  plan.runs[1].week = 2;
  plan.runs[1].power_verdict = true;
  plan.runs[1].near_budget = true;
  plan.runs[1].simulated_s = 1234.5;
  r.inputs = {.scenario = "scenario-x",
              .description = "a description",
              .scenario_source = "row.yaml",
              .trace = "trace.csv",
              .engine = "vllm-server 0.6",
              .seed = 99,
              .version = "9.9.9",
              .overrides = {"t1=0.8", "t2=0.9"},
              .slo = {.hp_p50_e2e_pct = 1.5,
                      .hp_p99_e2e_pct = 5.5,
                      .lp_p50_e2e_pct = 6.5,
                      .max_brake_events = 2},
              .t1_frac = 0.81,
              .t2_frac = 0.91};
  r.power = PowerTrace{.policy = "polca",
                       .servers = 44,
                       .budget_w = 250'000,
                       .window_s = 300,
                       .windows = {{.start_s = 0, .mean_w = 1, .max_w = 2}},
                       .brake_s = {600, 1200}};
  return r;
}

TEST(PlanDirTest, EveryFieldReadsBack) {
  const std::string dir = FreshDir("every_field");
  const PlanReport want = EveryFieldPlan();
  ASSERT_TRUE(WritePlanDir(dir, want));
  auto read = ReadPlanDir(dir);
  ASSERT_TRUE(read) << read.error().message();
  const sim::CapacityPlan& p = read->plan;
  EXPECT_EQ(p.baseline_servers, 41);
  EXPECT_EQ(p.risk_beyond, 3);
  testing::ExpectSameRun(p.baseline, want.plan.baseline, "baseline");
  EXPECT_EQ(p.planning_weeks, 2);
  EXPECT_EQ(p.validation_weeks, 1);
  EXPECT_EQ(p.max_weekly_risk, 0.03);
  EXPECT_EQ(p.confidence, 0.9);
  EXPECT_EQ(p.stress_cases, want.plan.stress_cases);
  EXPECT_EQ(p.week_seeds, want.plan.week_seeds);
  ASSERT_EQ(p.policies.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const sim::PolicyPlan& got = p.policies[i];
    const sim::PolicyPlan& w = want.plan.policies[i];
    const std::string at = "policies[" + std::to_string(i) + "]";
    EXPECT_EQ(got.policy, w.policy) << at;
    EXPECT_EQ(got.max_servers, w.max_servers) << at;
    EXPECT_EQ(got.extra_pct, w.extra_pct) << at;
    testing::ExpectSameRun(got.at_max, w.at_max, at + ".at_max");
    EXPECT_EQ(got.impact.hp_p50_e2e_pct, w.impact.hp_p50_e2e_pct) << at;
    EXPECT_EQ(got.impact.hp_p99_e2e_pct, w.impact.hp_p99_e2e_pct) << at;
    EXPECT_EQ(got.impact.lp_p50_e2e_pct, w.impact.lp_p50_e2e_pct) << at;
    EXPECT_EQ(got.impact.lp_p99_e2e_pct, w.impact.lp_p99_e2e_pct) << at;
    EXPECT_EQ(got.impact.hp_throughput_pct, w.impact.hp_throughput_pct) << at;
    EXPECT_EQ(got.impact.lp_throughput_pct, w.impact.lp_throughput_pct) << at;
    EXPECT_EQ(got.limit, w.limit) << at;
    EXPECT_EQ(got.searched_servers, w.searched_servers) << at;
    EXPECT_EQ(got.validated_weeks, w.validated_weeks) << at;
    EXPECT_EQ(got.validation_failure, w.validation_failure) << at;
  }
  EXPECT_EQ(p.simulations, 17);
  ASSERT_EQ(p.runs.size(), 2u);
  testing::ExpectSameRun(p.runs[0], want.plan.runs[0], "runs[0]");
  testing::ExpectSameRun(p.runs[1], want.plan.runs[1], "runs[1]");

  const PlanInputs& in = read->inputs;
  EXPECT_EQ(in.scenario, want.inputs.scenario);
  EXPECT_EQ(in.description, want.inputs.description);
  EXPECT_EQ(in.scenario_source, want.inputs.scenario_source);
  EXPECT_EQ(in.trace, want.inputs.trace);
  EXPECT_EQ(in.engine, want.inputs.engine);
  EXPECT_EQ(in.seed, want.inputs.seed);
  EXPECT_EQ(in.version, want.inputs.version);
  EXPECT_EQ(in.overrides, want.inputs.overrides);
  EXPECT_EQ(in.slo.hp_p50_e2e_pct, want.inputs.slo.hp_p50_e2e_pct);
  EXPECT_EQ(in.slo.hp_p99_e2e_pct, want.inputs.slo.hp_p99_e2e_pct);
  EXPECT_EQ(in.slo.lp_p50_e2e_pct, want.inputs.slo.lp_p50_e2e_pct);
  EXPECT_EQ(in.slo.max_brake_events, want.inputs.slo.max_brake_events);
  EXPECT_EQ(in.t1_frac, want.inputs.t1_frac);
  EXPECT_EQ(in.t2_frac, want.inputs.t2_frac);

  ASSERT_TRUE(read->power);
  EXPECT_EQ(read->power->policy, "polca");
  EXPECT_EQ(read->power->servers, 44);
  EXPECT_EQ(read->power->budget_w, 250'000);
  EXPECT_EQ(read->power->window_s, 300);
  EXPECT_EQ(read->power->brake_s, want.power->brake_s);
  ASSERT_EQ(read->power->windows.size(), 1u);
  EXPECT_EQ(read->power->windows[0].max_w, 2);

  // What is written for the file's other readers and never read back.
  const auto j = PlanReportJson(want);
  EXPECT_EQ(j["scenario"], "scenario-x");
  EXPECT_EQ(j["policies"][0]["brake_events"], want.plan.policies[0].at_max.brake_events);
  EXPECT_EQ(j["policies"][0]["peak_frac"], want.plan.policies[0].at_max.peak_frac);
  EXPECT_EQ(j["policies"][0]["capped_server_fraction"],
            want.plan.policies[0].at_max.capped_server_fraction);
  EXPECT_TRUE(j["policies"][1]["run"].is_null());
  EXPECT_TRUE(j["risk"].is_array());
  EXPECT_EQ(j["row_power"]["file"], kRowPowerFile);
}

TEST(PlanDirTest, WithoutPowerTraceThereIsNoCsv) {
  const std::string dir = FreshDir("no_power");
  PlanReport written = testing::SamplePlanReport();
  written.power.reset();
  ASSERT_TRUE(WritePlanDir(dir, written));
  EXPECT_FALSE(std::filesystem::exists(dir + "/row-power.csv"));
  auto read = ReadPlanDir(dir);
  ASSERT_TRUE(read) << read.error().message();
  EXPECT_FALSE(read->power);
}

TEST(PlanDirTest, ErrorsNameTheDirectoryFileAndField) {
  auto missing = ReadPlanDir("/nonexistent/plan-dir");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), core::Code::kNotFound);
  EXPECT_NE(missing.error().message().find("/nonexistent/plan-dir: no such directory"),
            std::string::npos)
      << missing.error().message();

  const std::string empty = FreshDir("empty");
  std::filesystem::create_directories(empty);
  auto no_plan = ReadPlanDir(empty);
  ASSERT_FALSE(no_plan);
  EXPECT_EQ(no_plan.error().code(), core::Code::kNotFound);
  EXPECT_NE(no_plan.error().message().find(empty + "/plan.json: missing"), std::string::npos)
      << no_plan.error().message();

  const std::string dir = FreshDir("bad_field");
  ASSERT_TRUE(WritePlanDir(dir, testing::SamplePlanReport()));
  auto json = PlanReportJson(testing::SamplePlanReport());
  json["policies"][1]["max_servers"] = "many";
  ASSERT_TRUE(core::WriteFileAtomically(dir + "/plan.json", json.dump()));
  auto bad = ReadPlanDir(dir);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), core::Code::kInvalidArgument);
  EXPECT_NE(bad.error().message().find(dir + "/plan.json: field 'policies[1].max_servers' is of "
                                             "the wrong type"),
            std::string::npos)
      << bad.error().message();

  // Issue 44, finding 9: a count past int's range was cast and wrapped (2^31 -> -2^31).
  json = PlanReportJson(testing::SamplePlanReport());
  json["policies"][1]["max_servers"] = 2147483648u;
  ASSERT_TRUE(core::WriteFileAtomically(dir + "/plan.json", json.dump()));
  auto wrapped = ReadPlanDir(dir);
  ASSERT_FALSE(wrapped) << wrapped->plan.policies[1].max_servers;
  EXPECT_NE(wrapped.error().message().find(dir + "/plan.json: field 'policies[1].max_servers' is "
                                                 "2147483648 (expected a count from 0 to "
                                                 "2147483647"),
            std::string::npos)
      << wrapped.error().message();

  json = PlanReportJson(testing::SamplePlanReport());
  json["week_seeds"] = {7};
  ASSERT_TRUE(core::WriteFileAtomically(dir + "/plan.json", json.dump()));
  auto seeds = ReadPlanDir(dir);
  ASSERT_FALSE(seeds);
  EXPECT_EQ(seeds.error().message(),
            dir +
                "/plan.json: week_seeds lists 1 for 1 planning weeks, 0 stress cases and 2 "
                "unseen weeks");

  ASSERT_TRUE(core::WriteFileAtomically(dir + "/plan.json", "{not json"));
  auto garbled = ReadPlanDir(dir);
  ASSERT_FALSE(garbled);
  EXPECT_NE(garbled.error().message().find("plan.json: not a JSON object"), std::string::npos);

  ASSERT_TRUE(WritePlanDir(dir, testing::SamplePlanReport()));
  std::ofstream(dir + "/row-power.csv", std::ios::app) << "1,2\n";
  auto bad_csv = ReadPlanDir(dir);
  ASSERT_FALSE(bad_csv);
  EXPECT_NE(bad_csv.error().message().find("row-power.csv:12: expected 3 fields, found 2"),
            std::string::npos)
      << bad_csv.error().message();
}

}  // namespace
}  // namespace headroom::report
