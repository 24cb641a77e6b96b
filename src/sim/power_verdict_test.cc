#include "sim/power_verdict.h"

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "sim/scenario_run.h"
#include "sim/testing/small_synth_row.h"
#include "sim/workload.h"

namespace headroom::sim {
namespace {

using testing::SmallSynthRow;

std::vector<std::unique_ptr<TraceSynth>> Streams(const ResolvedScenario& s, int servers) {
  auto streams = SynthStreams(s.scenario, "", servers, HpServers(servers, 0.5), s.scenario.seed);
  EXPECT_TRUE(streams) << streams.error().message();
  return std::move(*streams);
}

// The windows hold every time the load reaches the share, widened by the warm-up and the tail to
// whole minutes, within the trace, hottest first; a higher share leaves fewer seconds.
TEST(PowerVerdictTest, HotWindowsHoldTheBurstsNearThePeak) {
  const ResolvedScenario s = SmallSynthRow();
  const auto streams = Streams(s, 10);
  std::vector<const TraceSynth*> views;
  for (const auto& p : streams) views.push_back(p.get());
  VerdictOptions options;
  const auto windows = HotWindows(views, 3600, options);
  ASSERT_FALSE(windows.empty());
  double covered = 0;
  for (std::size_t i = 0; i < windows.size(); ++i) {
    const VerdictWindow& w = windows[i];
    EXPECT_GE(w.begin_s, 0);
    EXPECT_LE(w.end_s, 3600);
    EXPECT_EQ(std::fmod(w.begin_s, 60), 0) << w.begin_s;
    EXPECT_GE(w.hottest, options.hot_share);
    if (i > 0) {
      EXPECT_LE(w.hottest, windows[i - 1].hottest);
    }
    covered += w.end_s - w.begin_s;
  }
  // A burst outside every window is one whose load (at least its own stream's burst) stays
  // below the share of the peak without bursts.
  double peak = 0;
  for (double t_s = 0; t_s < 3600; t_s += 10) {
    double calm = 0;
    for (const TraceSynth* u : views) calm += u->RateAt(t_s, false) * u->MeanTokens();
    peak = std::max(peak, calm);
  }
  int outside = 0;
  for (const TraceSynth* t : views) {
    for (const auto& [b, e] : t->Bursts()) {
      if (b >= 3600) continue;
      bool inside = false;
      for (const VerdictWindow& w : windows) inside = inside || (w.begin_s <= b && b < w.end_s);
      if (inside) continue;
      ++outside;
      double load = 0;
      for (const TraceSynth* u : views) load += u->RateAt(b + 1, u == t) * u->MeanTokens();
      EXPECT_LT(load / peak, options.hot_share) << b;
    }
  }
  options.hot_share = 1.6;
  double fewer = 0;
  for (const VerdictWindow& w : HotWindows(views, 3600, options)) fewer += w.end_s - w.begin_s;
  EXPECT_LT(fewer, covered);
}

// A week whose load never reaches the hot share (no bursts) is judged around its own highest
// load, never called safe unseen: the windows hold the time of the highest load.
TEST(PowerVerdictTest, AWeekWithoutBurstsIsJudgedAroundItsPeak) {
  ResolvedScenario s = SmallSynthRow();
  s.scenario.workload.synth->bursts_per_day = 0;
  const auto streams = Streams(s, 10);
  std::vector<const TraceSynth*> views;
  for (const auto& p : streams) views.push_back(p.get());
  const auto windows = HotWindows(views, 3600, VerdictOptions{});
  ASSERT_FALSE(windows.empty());
  double highest_t = 0, highest = 0;
  for (double t = 0; t < 3600; t += 10) {
    double load = 0;
    for (const TraceSynth* u : views) load += u->RateAt(t, false) * u->MeanTokens();
    if (load > highest) highest = load, highest_t = t;
  }
  bool inside = false;
  for (const VerdictWindow& w : windows)
    inside = inside || (w.begin_s <= highest_t && highest_t < w.end_s);
  EXPECT_TRUE(inside) << highest_t;
  auto v = JudgePower(s, "none", 10, "", VerdictOptions{}, {}, nullptr);
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_GT(v->summary.simulated_s, 0);
}

// The cheap verdict against the whole hour, simulated exactly, on a few weeks and counts around
// the small row's answers (the full table: docs/row-simulator.md, `headroom check-verdict`):
// never safe where the hour has a power event, and its peak within a percent of the hour's where
// both are safe.
TEST(PowerVerdictTest, AgreesWithTheWholeWeekOnTheSmallRow) {
  ResolvedScenario s = SmallSynthRow();
  int events = 0, cases = 0;
  for (std::uint64_t seed : {1001, 1002, 1003, 1004}) {
    s.scenario.seed = seed;
    for (const std::string policy : {"none", "brake-only", "polca"}) {
      for (int servers : {10, 11, 12}) {
        RunOptions run;
        run.keep_power_series = false;
        run.stop_after_power_events = 0;
        auto exact = RunScenario(s, policy, servers, "", run);
        ASSERT_TRUE(exact) << exact.error().message();
        const RunSummary whole = Summarize(*exact);
        auto verdict = JudgePower(s, policy, servers, "", VerdictOptions{}, {}, nullptr);
        ASSERT_TRUE(verdict) << verdict.error().message();
        const RunSummary& v = verdict->summary;
        const bool exact_event = !PowerViolation(whole, s.scenario.slo).empty();
        const bool verdict_event = !PowerViolation(v, s.scenario.slo).empty();
        ++cases;
        events += exact_event;
        EXPECT_TRUE(verdict_event || !exact_event) << policy << " " << servers << " " << seed;
        if (!exact_event && !verdict_event) {
          EXPECT_NEAR(v.peak_frac, whole.peak_frac, 0.01)
              << policy << " " << servers << " " << seed;
          EXPECT_LT(v.simulated_s, whole.simulated_s);
        }
      }
    }
  }
  EXPECT_GE(events, 4);          // the cases include weeks with a power event
  EXPECT_LE(events, cases - 4);  // and weeks without
}

// A week whose windows come within the margin of the budget is near it (the whole week decides,
// where it matters); one whose workload is not synthesized has no verdict. The uncapped row's
// shadows that never acted in any window are quiet.
TEST(PowerVerdictTest, AVerdictWithinTheMarginIsNearTheBudget) {
  const ResolvedScenario s = SmallSynthRow();
  VerdictOptions all_near;
  all_near.margin = 1;  // every peak is within 100% of the budget
  auto v = JudgePower(s, "none", 10, "", all_near, {"brake-only"}, nullptr);
  ASSERT_TRUE(v) << v.error().message();
  EXPECT_TRUE(v->summary.power_verdict);
  EXPECT_TRUE(v->summary.near_budget);
  EXPECT_EQ(v->quiet, std::vector<std::string>{"brake-only"});  // never braked: never acted
  VerdictOptions none_near;
  none_near.margin = 0;
  auto cheap = JudgePower(s, "none", 10, "", none_near, {}, nullptr);
  ASSERT_TRUE(cheap);
  EXPECT_FALSE(cheap->summary.near_budget);
  EXPECT_EQ(cheap->summary.peak_frac, v->summary.peak_frac);
  // Over the budget: an event, never "near".
  auto over = JudgePower(s, "none", 12, "", all_near, {}, nullptr);
  ASSERT_TRUE(over);
  EXPECT_GT(over->summary.over_budget_episodes, 0u);
  EXPECT_FALSE(over->summary.near_budget);
  EXPECT_TRUE(over->summary.stopped_early);
  EXPECT_FALSE(JudgePower(s, "none", 10, "azure", VerdictOptions{}, {}, nullptr));
}

}  // namespace
}  // namespace headroom::sim
