// SamplePlanReport(): a small capacity plan with every field set (two capping policies and the
// uncapped baseline over 40..50 servers, one run stopped early, a power trace with a brake, one
// planning week and two unseen ones, the first of which lowered the uncapped row from 41 to 40),
// for the report's tests. Test-only.
#ifndef HEADROOM_REPORT_TESTING_SAMPLE_PLAN_H_
#define HEADROOM_REPORT_TESTING_SAMPLE_PLAN_H_

#include "report/plan_report.h"

namespace headroom::report::testing {

inline sim::RunSummary SampleRun(const std::string& policy, int servers, double latency_factor) {
  sim::RunSummary r;
  r.policy = policy;
  r.servers = servers;
  r.hp_servers = servers / 2;
  r.budget_w = 260'000;
  r.peak_frac = 0.02 * servers;
  r.mean_frac = 0.6;
  r.max_rise_frac = 0.1;
  r.capped_server_fraction = policy == "none" ? 0 : 0.05;
  r.energy_j = 1e9 + servers;
  r.hp = {.ttft_p50_s = 0.3,
          .ttft_p99_s = 0.9,
          .tbt_p50_s = 0.04,
          .tbt_p99_s = 0.08,
          .e2e_p50_s = 4 * latency_factor,
          .e2e_p90_s = 9,
          .e2e_p99_s = 12 * latency_factor,
          .throughput_tok_s = 900,
          .requests = 1000};
  r.lp = {.ttft_p50_s = 0.5,
          .ttft_p99_s = 1.5,
          .tbt_p50_s = 0.05,
          .tbt_p99_s = 0.1,
          .e2e_p50_s = 20 * latency_factor,
          .e2e_p90_s = 40,
          .e2e_p99_s = 60 * latency_factor,
          .throughput_tok_s = 1200,
          .requests = 2000};
  return r;
}

inline PlanReport SamplePlanReport() {
  PlanReport report;
  sim::CapacityPlan& plan = report.plan;
  plan.baseline_servers = 40;
  plan.baseline = SampleRun("none", 40, 1);
  for (int n : {40, 45, 48, 49, 50}) plan.runs.push_back(SampleRun("none", n, 1));
  for (int n : {45, 48, 49}) plan.runs.push_back(SampleRun("polca", n, 1 + 0.001 * (n - 40)));
  sim::RunSummary broken = SampleRun("polca", 50, 1.2);
  broken.brake_events = 1;
  broken.stopped_early = true;
  plan.runs.push_back(broken);
  plan.runs.push_back(SampleRun("uniform", 45, 1.08));
  plan.planning_weeks = 1;
  plan.validation_weeks = 2;
  plan.week_seeds = {7, 1007, 1008};
  sim::RunSummary unseen = SampleRun("none", 41, 1);
  unseen.week = 1;
  unseen.over_budget_episodes = 1;
  plan.runs.push_back(unseen);
  plan.simulations = static_cast<int>(plan.runs.size());
  sim::PolicyPlan none{.policy = "none",
                       .max_servers = 40,
                       .extra_pct = 0,
                       .at_max = plan.baseline,
                       .impact = {},
                       .limit = "41 servers: unseen week 1 (seed 1007): over budget 1 time",
                       .searched_servers = 41,
                       .validated_weeks = 2,
                       .validation_failure =
                           "1 of 2 unseen weeks failed at 41 servers, first "
                           "unseen week 1 (seed 1007): over budget 1 time"};
  sim::PolicyPlan polca{.policy = "polca",
                        .max_servers = 49,
                        .extra_pct = 22.5,
                        .at_max = plan.runs[7],
                        .impact = {.hp_p50_e2e_pct = 0.5,
                                   .hp_p99_e2e_pct = 0.9,
                                   .lp_p50_e2e_pct = 4.1,
                                   .lp_p99_e2e_pct = 0.9,
                                   .hp_throughput_pct = 0,
                                   .lp_throughput_pct = -0.2},
                        .limit = "50 servers: 1 brake event",
                        .searched_servers = 49,
                        .validated_weeks = 2,
                        .validation_failure = ""};
  sim::PolicyPlan uniform{.policy = "uniform",
                          .max_servers = 0,
                          .extra_pct = 0,
                          .at_max = {},
                          .impact = {},
                          .limit = "40 servers: LP P50 +8.0%",
                          .searched_servers = 0,
                          .validated_weeks = 0,
                          .validation_failure = ""};
  plan.policies = {none, polca, uniform};
  report.inputs = {.scenario = "polca-a100-row",
                   .description = "40 DGX-A100 <servers> & a \"week\"",
                   .scenario_source = "data/scenarios/polca-a100-row.yaml",
                   .trace = "",
                   .engine = "vllm-server >= 0.6",
                   .seed = 7,
                   .version = "0.0.0-test",
                   .overrides = {"t1=0.82"},
                   .slo = {},
                   .t1_frac = 0.82,
                   .t2_frac = 0.89};
  PowerTrace power{.policy = "polca", .servers = 49, .budget_w = 260'000, .window_s = 300};
  for (int i = 0; i < 10; ++i) {
    power.windows.push_back(
        {.start_s = 300.0 * i, .mean_w = 150'000.0 + 1000 * i, .max_w = 180'000.0 + 2000 * i});
  }
  power.brake_s = {1234.5};
  report.power = power;
  return report;
}

}  // namespace headroom::report::testing

#endif  // HEADROOM_REPORT_TESTING_SAMPLE_PLAN_H_
