#include "sim/capacity_planner.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

#include <gtest/gtest.h>

#include "policy/policy_factory.h"
#include "sim/testing/small_synth_row.h"
#include "sim/weekly_risk.h"

namespace headroom::sim {
namespace {

using testing::SmallSynthRow;

std::tuple<std::string, int, int> Key(const RunSummary& r) { return {r.policy, r.servers, r.week}; }

TEST(CapacityPlannerTest, ReplayedWeeksGiveThePlanOfFreshlySynthesizedOnes) {
  const ResolvedScenario scenario = SmallSynthRow();
  PlanOptions options;
  options.policies = {"none", "brake-only", "polca"};
  options.threads = 2;
  auto replayed = PlanCapacity(scenario, options);
  ASSERT_TRUE(replayed) << replayed.error().message();
  options.recording_bytes = 0;
  auto fresh = PlanCapacity(scenario, options);
  ASSERT_TRUE(fresh) << fresh.error().message();

  ASSERT_EQ(replayed->runs.size(), fresh->runs.size());
  for (std::size_t i = 0; i < fresh->runs.size(); ++i) {
    const RunSummary& a = replayed->runs[i];
    const RunSummary& b = fresh->runs[i];
    ASSERT_EQ(Key(a), Key(b));
    EXPECT_EQ(a.peak_frac, b.peak_frac) << a.policy << " " << a.servers;
    EXPECT_EQ(a.energy_j, b.energy_j) << a.policy << " " << a.servers;
    EXPECT_EQ(a.brake_events, b.brake_events) << a.policy << " " << a.servers;
    EXPECT_EQ(a.hp.requests, b.hp.requests) << a.policy << " " << a.servers;
    EXPECT_EQ(a.lp.e2e_p50_s, b.lp.e2e_p50_s) << a.policy << " " << a.servers;
    EXPECT_EQ(a.hp.e2e_p99_s, b.hp.e2e_p99_s) << a.policy << " " << a.servers;
  }
  for (std::size_t k = 0; k < fresh->policies.size(); ++k) {
    EXPECT_EQ(replayed->policies[k].max_servers, fresh->policies[k].max_servers);
    EXPECT_EQ(replayed->policies[k].limit, fresh->policies[k].limit);
  }
  // Every run after the first of its week and count replayed it (the recordings fit in memory).
  std::set<std::pair<int, int>> weeks;
  for (const RunSummary& r : fresh->runs) weeks.insert({r.week, r.servers});
  EXPECT_EQ(fresh->replayed_simulations, 0);
  EXPECT_GE(replayed->replayed_simulations, 1);
  EXPECT_LE(replayed->replayed_simulations, static_cast<int>(fresh->runs.size() - weeks.size()));
}

// Where a capping policy never acted on the uncapped row's week without a power event, the plan
// takes its run from the baseline's instead of simulating it: the same plan, run for run.
TEST(CapacityPlannerTest, RunsTakenFromTheBaselineAreTheRunsThemselves) {
  const ResolvedScenario scenario = SmallSynthRow();
  PlanOptions options;
  options.policies = {"none", "brake-only", "polca"};
  options.threads = 2;
  options.risk_beyond = 1;
  auto shared = PlanCapacity(scenario, options);
  ASSERT_TRUE(shared) << shared.error().message();
  options.share_quiet_runs = false;
  auto simulated = PlanCapacity(scenario, options);
  ASSERT_TRUE(simulated) << simulated.error().message();
  EXPECT_EQ(simulated->shared_runs, 0);
  EXPECT_GE(shared->shared_runs, 1);
  EXPECT_LT(shared->simulations, simulated->simulations);
  std::map<std::tuple<std::string, int, int>, const RunSummary*> by_key;
  for (const RunSummary& r : simulated->runs) by_key[Key(r)] = &r;
  int compared = 0;
  for (const RunSummary& a : shared->runs) {
    const auto it = by_key.find(Key(a));
    if (it == by_key.end()) continue;  // taken from a baseline, never asked for by the search
    const RunSummary& b = *it->second;
    ++compared;
    EXPECT_EQ(a.peak_frac, b.peak_frac) << a.policy << " " << a.servers << " " << a.week;
    EXPECT_EQ(a.energy_j, b.energy_j) << a.policy << " " << a.servers << " " << a.week;
    EXPECT_EQ(a.stopped_early, b.stopped_early) << a.policy << " " << a.servers;
    EXPECT_EQ(a.lp.e2e_p50_s, b.lp.e2e_p50_s) << a.policy << " " << a.servers;
    EXPECT_EQ(a.hp.e2e_p99_s, b.hp.e2e_p99_s) << a.policy << " " << a.servers;
  }
  EXPECT_EQ(compared, static_cast<int>(simulated->runs.size()));
  for (std::size_t k = 0; k < simulated->policies.size(); ++k) {
    EXPECT_EQ(shared->policies[k].max_servers, simulated->policies[k].max_servers);
    EXPECT_EQ(shared->policies[k].limit, simulated->policies[k].limit);
  }
}

// The uncapped baseline is run only to compare latencies with: never at a count and week where
// the policy's run already broke the power SLO, and always where it did not.
TEST(CapacityPlannerTest, TheBaselineRunsOnlyWhereTheLatencyDecides) {
  PlanOptions options;
  options.policies = {"brake-only"};
  options.threads = 2;
  auto plan = PlanCapacity(SmallSynthRow(), options);
  ASSERT_TRUE(plan) << plan.error().message();
  std::set<std::pair<int, int>> baselines;
  for (const RunSummary& r : plan->runs) {
    if (r.policy == policy::kUncappedPolicy) baselines.insert({r.servers, r.week});
  }
  int braked = 0;
  for (const RunSummary& r : plan->runs) {
    if (r.week >= SearchedWeeks(*plan)) {  // the unseen weeks: power verdicts, no baselines
      EXPECT_NE(r.policy, policy::kUncappedPolicy) << r.servers << " servers, week " << r.week;
      continue;
    }
    if (r.policy == policy::kUncappedPolicy) continue;
    const bool power_ok = r.brake_events == 0 && r.over_budget_episodes == 0;
    braked += !power_ok;
    EXPECT_EQ(baselines.count({r.servers, r.week}), power_ok ? 1u : 0u)
        << r.servers << " servers, week " << r.week;
  }
  EXPECT_GE(braked, 1);  // the count above the answer brakes
}

// The search starts where the uncapped row's peak, grown with its servers, would reach the
// budget, and decides the answer from counts next to it.
TEST(CapacityPlannerTest, TheSearchStartsWhereTheUncappedRowWouldReachItsBudget) {
  PlanOptions options;
  options.policies = {"brake-only"};
  options.validate_weeks = 0;
  auto plan = PlanCapacity(SmallSynthRow(), options);
  ASSERT_TRUE(plan) << plan.error().message();
  const int n0 = plan->baseline_servers;
  const int guess = static_cast<int>(n0 / plan->baseline.peak_frac);
  std::set<int> counts;
  for (const RunSummary& r : plan->runs) {
    if (r.policy == "brake-only") counts.insert(r.servers);
  }
  EXPECT_TRUE(counts.count(guess)) << guess;
  const int answer = plan->policies[0].max_servers;
  EXPECT_TRUE(counts.count(answer)) << answer;
  EXPECT_TRUE(counts.count(answer + 1)) << answer;
  // Galloping from the guess: no count farther from it than twice its distance to the answer.
  for (int n : counts) EXPECT_LE(std::abs(n - guess), 2 * std::abs(answer - guess) + 1) << n;
}

// With risk_beyond, every count within that many of each answer is judged on every unseen week
// (its power verdict); the answers are the plan's without: the extra verdicts only look.
TEST(CapacityPlannerTest, RiskBeyondJudgesEveryUnseenWeekAtAFewCountsAroundEachAnswer) {
  PlanOptions options;
  options.policies = {"none", "brake-only"};
  options.threads = 2;
  options.validate_weeks = 2;
  options.risk_beyond = 0;
  auto searched = PlanCapacity(SmallSynthRow(), options);
  ASSERT_TRUE(searched) << searched.error().message();
  options.risk_beyond = 2;
  auto plan = PlanCapacity(SmallSynthRow(), options);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(plan->risk_beyond, 2);
  EXPECT_GT(plan->simulations, searched->simulations);
  std::map<std::pair<std::string, int>, int> unseen;
  for (const CountRisk& c : PlanRisk(*plan)) unseen[{c.policy, c.servers}] = c.unseen_weeks;
  const int n_max = plan->baseline_servers * 14 / 10;  // the scenario's max_extra_pct: 40
  for (const PolicyPlan& p : plan->policies) {
    ASSERT_GE(p.max_servers, plan->baseline_servers) << p.policy;
    const int from = std::max(plan->baseline_servers, p.max_servers - 2);
    for (int n = from; n <= std::min(n_max, p.max_servers + 2); ++n) {
      EXPECT_EQ((unseen[{p.policy, n}]), 2) << p.policy << " " << n;
    }
  }
  for (std::size_t k = 0; k < plan->policies.size(); ++k) {
    EXPECT_EQ(plan->policies[k].max_servers, searched->policies[k].max_servers);
    EXPECT_EQ(plan->policies[k].limit, searched->policies[k].limit);
  }
  options.risk_beyond = -1;
  EXPECT_FALSE(PlanCapacity(SmallSynthRow(), options));
}

// A count's fit on the unseen weeks comes from their power verdicts; where a verdict came near the
// budget and the fit depends on it, its whole week is run exactly and stands for it. With every
// verdict near (a margin of 100%), the answers' unseen weeks are all run whole, and the plan is
// the plan of the verdicts alone (no week braked near its verdict's peak here).
TEST(CapacityPlannerTest, AVerdictNearTheBudgetIsReplacedByItsWholeWeekWhereItDecides) {
  PlanOptions options;
  options.policies = {"none", "brake-only"};
  options.threads = 2;
  options.risk_beyond = 1;
  options.verdict.margin = 0;
  auto cheap = PlanCapacity(SmallSynthRow(), options);
  ASSERT_TRUE(cheap) << cheap.error().message();
  options.verdict.margin = 1;
  auto near = PlanCapacity(SmallSynthRow(), options);
  ASSERT_TRUE(near) << near.error().message();
  for (std::size_t k = 0; k < near->policies.size(); ++k) {
    EXPECT_EQ(near->policies[k].max_servers, cheap->policies[k].max_servers);
  }
  int whole = 0, left_near = 0;
  for (const RunSummary& r : near->runs) {
    if (r.week < SearchedWeeks(*near)) continue;
    const bool at_answer = r.servers == near->policies[r.policy == "none" ? 0 : 1].max_servers;
    if (at_answer) {  // decided: 0 of 2 clean fits 80% only if no near week braked
      EXPECT_FALSE(r.power_verdict) << r.policy << " " << r.servers << " " << r.week;
      whole += !r.power_verdict;
    } else if (r.near_budget) {
      ++left_near;  // the risk's other counts: near weeks stay verdicts
    }
  }
  EXPECT_EQ(whole, 4);  // two policies, two unseen weeks
  EXPECT_GE(left_near, 1);
  for (const CountRisk& c : PlanRisk(*near)) {
    if (c.unseen_weeks_near_budget == 0) continue;
    EXPECT_GE(c.unseen_risk_upper,
              WeeklyRiskUpperBound(c.unseen_weeks_with_power_event + c.unseen_weeks_near_budget,
                                   c.unseen_weeks, 0.95) -
                  1e-12);
  }
}

// The search asks for a count's weeks a few at a time and stops at the first that fails: a
// count that fails runs fewer weeks than one that keeps the SLO, and the answer is the one of
// running every week at every count (what the plan's verdict on every week gives).
TEST(CapacityPlannerTest, TheSearchStopsAtACountsFirstFailingWeek) {
  PlanOptions options;
  options.policies = {"none"};
  options.threads = 2;
  options.weeks = 4;
  options.validate_weeks = 0;
  // Seeds 1 to 4: at one server past the answer, the second week (seed 2) is the first to fail.
  ResolvedScenario scenario = SmallSynthRow();
  scenario.scenario.seed = 1;
  auto plan = PlanCapacity(scenario, options);
  ASSERT_TRUE(plan) << plan.error().message();
  const PolicyPlan& none = plan->policies.front();
  std::map<int, std::map<int, const RunSummary*>> runs;  // by servers, then week
  for (const RunSummary& r : plan->runs) runs[r.servers][r.week] = &r;
  EXPECT_EQ(runs[none.max_servers].size(), 4u);
  ASSERT_TRUE(runs.count(none.max_servers + 1)) << none.limit;
  EXPECT_EQ(runs[none.max_servers + 1].size(), 2u) << none.limit;
  // Above the answer, a count ran its weeks in order, one at a time, up to the first that broke
  // the SLO.
  for (const auto& [servers, by_week] : runs) {
    if (servers <= none.max_servers) continue;
    int first_broken = -1;
    for (const auto& [week, r] : by_week) {
      if (first_broken < 0 && !PowerViolation(*r, {}).empty()) first_broken = week;
    }
    ASSERT_GE(first_broken, 0) << servers << " servers";
    EXPECT_EQ(static_cast<int>(by_week.size()), first_broken + 1) << servers << " servers";
    EXPECT_EQ(by_week.rbegin()->first, static_cast<int>(by_week.size()) - 1) << servers;
  }
  // The answer of judging every week at every count: the smallest of each week's own.
  int smallest = 1'000;
  options.weeks = 1;
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    scenario.scenario.seed = seed;
    auto one = PlanCapacity(scenario, options);
    ASSERT_TRUE(one) << one.error().message();
    smallest = std::min(smallest, one->policies.front().max_servers);
  }
  EXPECT_EQ(smallest, none.max_servers);
}

// A plan is a function of its scenario and seeds: the same runs and answers on one thread as on
// three (the weeks asked for depend on results, never on which thread finished first), and
// another seed set gives other weeks.
TEST(CapacityPlannerTest, APlanIsTheSameOnAnyNumberOfThreadsAndChangesWithItsSeeds) {
  PlanOptions options;
  options.policies = {"none", "brake-only", "polca"};
  options.weeks = 3;
  options.validate_weeks = 2;
  options.stress = std::vector<StressCase>{*ParseStressCase("bursts:burst_size=3")};
  options.risk_beyond = 1;
  options.threads = 1;
  auto one = PlanCapacity(SmallSynthRow(), options);
  ASSERT_TRUE(one) << one.error().message();
  options.threads = 3;
  auto three = PlanCapacity(SmallSynthRow(), options);
  ASSERT_TRUE(three) << three.error().message();
  EXPECT_EQ(one->simulations, three->simulations);
  EXPECT_EQ(one->shared_runs, three->shared_runs);
  ASSERT_EQ(one->runs.size(), three->runs.size());
  for (std::size_t i = 0; i < one->runs.size(); ++i) {
    const RunSummary& a = one->runs[i];
    const RunSummary& b = three->runs[i];
    ASSERT_EQ(Key(a), Key(b));
    EXPECT_EQ(a.peak_frac, b.peak_frac) << a.policy << " " << a.servers << " " << a.week;
    EXPECT_EQ(a.energy_j, b.energy_j) << a.policy << " " << a.servers << " " << a.week;
    EXPECT_EQ(a.stopped_early, b.stopped_early) << a.policy << " " << a.servers << " " << a.week;
    EXPECT_EQ(a.lp.e2e_p50_s, b.lp.e2e_p50_s) << a.policy << " " << a.servers << " " << a.week;
  }
  for (std::size_t k = 0; k < one->policies.size(); ++k) {
    EXPECT_EQ(one->policies[k].max_servers, three->policies[k].max_servers);
    EXPECT_EQ(one->policies[k].limit, three->policies[k].limit);
    EXPECT_EQ(one->policies[k].validation_failure, three->policies[k].validation_failure);
  }
  EXPECT_EQ(one->week_seeds, three->week_seeds);

  ResolvedScenario other = SmallSynthRow();
  other.scenario.seed = 7;
  auto reseeded = PlanCapacity(other, options);
  ASSERT_TRUE(reseeded) << reseeded.error().message();
  EXPECT_NE(reseeded->week_seeds, one->week_seeds);
  EXPECT_NE(reseeded->baseline.energy_j, one->baseline.energy_j);
}

// A stop (Ctrl-C) ends a plan with kCancelled, its runs ahead included: the pool neither waits
// for them to finish nor hangs on a round that will never complete.
TEST(CapacityPlannerTest, AStoppedPlanEndsCancelled) {
  PlanOptions options;
  options.policies = {"none", "brake-only", "polca"};
  options.weeks = 3;
  options.validate_weeks = 2;
  options.threads = 2;
  std::atomic<bool> stop{true};
  options.stop = &stop;
  auto plan = PlanCapacity(SmallSynthRow(), options);
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code(), core::Code::kCancelled) << plan.error().message();
}

}  // namespace
}  // namespace headroom::sim
