#include "sim/least_work_table.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace headroom::sim {
namespace {

// The steps done by `elapsed_s` of a run, as the simulator counts them: the most whose
// arithmetic sum fits.
int StepsDoneBy(const RouteState& s, double elapsed_s) {
  int done = 0;
  while (done < s.steps) {
    const double n = done + 1;
    if (n * s.first_step_s + s.step_growth_s * n * (n - 1) / 2 > elapsed_s) break;
    ++done;
  }
  return done;
}

double WorkAt(const RouteState& s, double now_ns) {
  if (s.steps <= 1) return s.outstanding;
  return s.outstanding - s.running * StepsDoneBy(s, (now_ns - s.start_ns) * 1e-9);
}

// The choice the table stands for: every instance's exact work, scanned from the cursor.
std::size_t ScanLeast(const std::vector<RouteState>& states, double now_ns, std::size_t cursor) {
  std::size_t best = states.size();
  double best_work = std::numeric_limits<double>::infinity();
  for (std::size_t seen = 0, k = cursor; seen < states.size();
       ++seen, k = k + 1 == states.size() ? 0 : k + 1) {
    if (const double work = WorkAt(states[k], now_ns); work < best_work) {
      best_work = work;
      best = k;
    }
  }
  return best;
}

// An instance as the simulator has them: idle, prefilling, or in a run of decode steps that
// started before now, some at their very end (its last step leaving no work) or past it.
RouteState RandomState(std::mt19937_64& rng, double now_ns) {
  std::uniform_real_distribution<double> unit(0, 1);
  RouteState s;
  const double kind = unit(rng);
  if (kind < 0.2) return s;  // idle
  s.running = 1 + static_cast<int>(unit(rng) * 6);
  if (kind < 0.35) {  // a prefill or a single step: its work stays as it is
    s.steps = unit(rng) < 0.5 ? 0 : 1;
    s.outstanding = std::floor(1 + unit(rng) * 3000);
    return s;
  }
  s.steps = 2 + static_cast<int>(unit(rng) * 400);
  s.first_step_s = 0.02 + unit(rng) * 0.03;
  s.step_growth_s = unit(rng) < 0.1 ? -1e-7 : unit(rng) * 2e-5;
  // A few runs whose last step leaves no work; the rest with work after it (small: ties).
  s.outstanding = s.running * s.steps + (unit(rng) < 0.3 ? 0 : std::floor(unit(rng) * 40));
  const double n = s.steps;
  const double run_s = n * s.first_step_s + s.step_growth_s * n * (n - 1) / 2;
  // Started up to 1.2 runs ago, or exactly one run ago (at its end now).
  const double ago_s = unit(rng) < 0.15 ? run_s : unit(rng) * run_s * 1.2;
  s.start_ns = std::max(0.0, now_ns - std::round(ago_s * 1e9));
  s.end_ns = s.start_ns + std::round(run_s * 1e9);
  return s;
}

TEST(LeastWorkTableTest, ChoosesAsAScanOfEveryInstancesExactWork) {
  std::mt19937_64 rng(7);
  int exact_counts = 0;
  int exact_counts_scan = 0;
  for (std::size_t n : {1, 2, 3, 5, 26, 63, 64, 65, 130}) {
    for (int trial = 0; trial < 400; ++trial) {
      const double now_ns = 1e12 + std::floor(std::uniform_real_distribution<double>(0, 1e9)(rng));
      std::vector<RouteState> states;
      LeastWorkTable table(n);
      for (std::size_t k = 0; k < n; ++k) {
        states.push_back(RandomState(rng, now_ns));
        table.Set(k, states.back());
      }
      const std::size_t cursor = rng() % n;
      const std::size_t chosen = table.Least(now_ns, cursor, [&](std::size_t k) {
        ++exact_counts;
        return StepsDoneBy(states[k], (now_ns - states[k].start_ns) * 1e-9);
      });
      ASSERT_EQ(chosen, ScanLeast(states, now_ns, cursor))
          << n << " instances, trial " << trial << ", cursor " << cursor;
      for (const RouteState& s : states) exact_counts_scan += s.steps > 1 ? 1 : 0;
    }
  }
  // What the bounds are for: most instances' work is never counted exactly.
  EXPECT_LT(exact_counts, exact_counts_scan / 4);
}

TEST(LeastWorkTableTest, ARunAtItsEndBeforeAnIdleInstanceIsChosen) {
  const double now_ns = 5e9;
  // Instance 1 decodes 10 steps of 2 sequences, its last step leaving no work, done by now;
  // instance 3 is idle. From cursor 0 both have work 0, and instance 1 comes first.
  RouteState ended{.outstanding = 20,
                   .running = 2,
                   .steps = 10,
                   .start_ns = 4e9,
                   .end_ns = 4.5e9,
                   .first_step_s = 0.05,
                   .step_growth_s = 0};
  LeastWorkTable table(4);
  for (std::size_t k = 0; k < 3; ++k) {
    table.Set(k, {.outstanding = 100, .running = 1, .steps = 0});
  }
  table.Set(1, ended);
  table.Set(3, {});
  double at_ns = now_ns;
  const auto steps_done = [&](std::size_t k) {
    return k == 1 ? StepsDoneBy(ended, (at_ns - ended.start_ns) * 1e-9) : 0;
  };
  EXPECT_EQ(table.Least(at_ns, 0, steps_done), 1u);
  EXPECT_EQ(table.Least(at_ns, 2, steps_done), 3u);  // from 2, the idle one comes first
  at_ns = 4.5e9;                                     // at its end's very time: done
  EXPECT_EQ(table.Least(at_ns, 0, steps_done), 1u);
  // A few ns before it (within the table's margin, so counted exactly), and a step before.
  for (double before_ns : {4.5e9 - 5, 4.46e9}) {
    at_ns = before_ns;
    EXPECT_EQ(table.Least(at_ns, 0, steps_done), 3u) << before_ns;
  }
  at_ns = now_ns;
  // A request joins it: work is left after its run.
  table.SetOutstanding(1, 25);
  EXPECT_EQ(table.Least(now_ns, 0, steps_done), 3u);
}

}  // namespace
}  // namespace headroom::sim
