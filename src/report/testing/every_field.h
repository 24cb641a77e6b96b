// A run summary with every member that the reports' files keep set, each to its own value, and
// the member-by-member check that a copy read back from a file equals it: the round-trip tests
// of the field tables (report/simulation_report.h's kRunSummaryFields and the files that embed
// it) fail when an entry is dropped from a table, because the member then reads back as its
// default. Test-only.
#ifndef HEADROOM_REPORT_TESTING_EVERY_FIELD_H_
#define HEADROOM_REPORT_TESTING_EVERY_FIELD_H_

#include <string>

#include <gtest/gtest.h>

#include "report/mig_instances.h"
#include "sim/run_summary.h"

namespace headroom::report::testing {

// `k` (1, 2, ...) makes each run's values its own. Not set (not in the files): power,
// power_window_s, brake_s; week, power_verdict and simulated_s only where the file keeps them
// (plan.json's runs).
inline sim::RunSummary EveryFieldRun(int k) {
  sim::RunSummary r;
  r.policy = "policy-" + std::to_string(k);
  r.servers = 100 * k + 1;
  r.hp_servers = 100 * k + 2;
  r.budget_w = 1000.5 * k + 3;
  r.peak_frac = 0.01 * k + 0.04;
  r.mean_frac = 0.01 * k + 0.05;
  r.max_rise_frac = 0.01 * k + 0.06;
  r.brake_events = 100 * k + 7;
  r.over_budget_episodes = 100 * k + 8;
  r.over_budget_s = 100.5 * k + 9;
  r.capped_server_fraction = 0.01 * k + 0.10;
  r.energy_j = 1e6 * k + 11;
  r.stopped_early = true;
  const auto klass = [k](double base) {
    return sim::RunSummary::Class{.ttft_p50_s = base + 0.01 * k,
                                  .ttft_p99_s = base + 0.02 * k,
                                  .tbt_p50_s = base + 0.03 * k,
                                  .tbt_p99_s = base + 0.04 * k,
                                  .e2e_p50_s = base + 0.05 * k,
                                  .e2e_p90_s = base + 0.06 * k,
                                  .e2e_p99_s = base + 0.07 * k,
                                  .throughput_tok_s = base + 0.08 * k,
                                  .requests = static_cast<std::uint64_t>(base * 1000) + k};
  };
  r.hp = klass(12);
  r.lp = klass(13);
  return r;
}

inline void ExpectSameClass(const sim::RunSummary::Class& read, const sim::RunSummary::Class& want,
                            const std::string& where) {
  EXPECT_EQ(read.ttft_p50_s, want.ttft_p50_s) << where;
  EXPECT_EQ(read.ttft_p99_s, want.ttft_p99_s) << where;
  EXPECT_EQ(read.tbt_p50_s, want.tbt_p50_s) << where;
  EXPECT_EQ(read.tbt_p99_s, want.tbt_p99_s) << where;
  EXPECT_EQ(read.e2e_p50_s, want.e2e_p50_s) << where;
  EXPECT_EQ(read.e2e_p90_s, want.e2e_p90_s) << where;
  EXPECT_EQ(read.e2e_p99_s, want.e2e_p99_s) << where;
  EXPECT_EQ(read.throughput_tok_s, want.throughput_tok_s) << where;
  EXPECT_EQ(read.requests, want.requests) << where;
}

inline void ExpectSameRun(const sim::RunSummary& read, const sim::RunSummary& want,
                          const std::string& where) {
  EXPECT_EQ(read.policy, want.policy) << where;
  EXPECT_EQ(read.servers, want.servers) << where;
  EXPECT_EQ(read.hp_servers, want.hp_servers) << where;
  EXPECT_EQ(read.budget_w, want.budget_w) << where;
  EXPECT_EQ(read.peak_frac, want.peak_frac) << where;
  EXPECT_EQ(read.mean_frac, want.mean_frac) << where;
  EXPECT_EQ(read.max_rise_frac, want.max_rise_frac) << where;
  EXPECT_EQ(read.brake_events, want.brake_events) << where;
  EXPECT_EQ(read.over_budget_episodes, want.over_budget_episodes) << where;
  EXPECT_EQ(read.over_budget_s, want.over_budget_s) << where;
  EXPECT_EQ(read.capped_server_fraction, want.capped_server_fraction) << where;
  EXPECT_EQ(read.energy_j, want.energy_j) << where;
  EXPECT_EQ(read.stopped_early, want.stopped_early) << where;
  EXPECT_EQ(read.week, want.week) << where;
  EXPECT_EQ(read.power_verdict, want.power_verdict) << where;
  EXPECT_EQ(read.near_budget, want.near_budget) << where;
  EXPECT_EQ(read.simulated_s, want.simulated_s) << where;
  ExpectSameClass(read.hp, want.hp, where + ".hp");
  ExpectSameClass(read.lp, want.lp, where + ".lp");
}

// A MIG GPU's geometry as mig-plan.json and mig-characterize.json keep it, member by member.
inline void ExpectSameGeometry(const MigGeometry& read, const MigGeometry& want) {
  EXPECT_EQ(read.gpu, want.gpu);
  EXPECT_EQ(read.memory_slices, want.memory_slices);
  EXPECT_EQ(read.compute_slices, want.compute_slices);
  ASSERT_EQ(read.profiles.size(), want.profiles.size());
  for (std::size_t i = 0; i < read.profiles.size(); ++i) {
    EXPECT_EQ(read.profiles[i].name, want.profiles[i].name);
    EXPECT_EQ(read.profiles[i].short_name, want.profiles[i].short_name);
    EXPECT_EQ(read.profiles[i].compute_slices, want.profiles[i].compute_slices);
    EXPECT_EQ(read.profiles[i].memory_slices, want.profiles[i].memory_slices);
  }
}
}  // namespace headroom::report::testing

#endif  // HEADROOM_REPORT_TESTING_EVERY_FIELD_H_
