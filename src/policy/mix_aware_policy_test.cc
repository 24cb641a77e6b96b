#include "policy/mix_aware_policy.h"

#include <algorithm>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "policy/policy_factory.h"

namespace headroom::policy {
namespace {

constexpr double kMixBudgetW = 8192;  // a power of two: p * budget / budget == p exactly
constexpr double kMixGpuW = 2000;     // every server's GPUs
constexpr double kMixGpuMaxW = 3200;

// LP servers 0..3 with the given prefill shares (nullopt: no engine signal), then one HP server.
Observation MixObs(double t_s, double p, const std::vector<std::optional<double>>& shares,
                   const std::vector<double>& waiting = {}) {
  Observation obs;
  obs.now = core::FromSeconds(t_s);
  obs.budget = core::Watts(kMixBudgetW);
  obs.row_power = core::Watts(p * kMixBudgetW);
  for (size_t i = 0; i < shares.size(); ++i) {
    ServerObservation s{.priority = ServerPriority::kLow,
                        .gpu_power = core::Watts(kMixGpuW),
                        .gpu_max = core::Watts(kMixGpuMaxW)};
    if (shares[i]) {
      s.serving = ServingSignal{.prefill_share = *shares[i],
                                .waiting = i < waiting.size() ? waiting[i] : 0};
    }
    obs.servers.push_back(s);
  }
  obs.servers.push_back({.priority = ServerPriority::kHigh,
                         .gpu_power = core::Watts(kMixGpuW),
                         .gpu_max = core::Watts(kMixGpuMaxW)});
  return obs;
}

std::vector<bool> CappedServers(const Decision& d) {
  std::vector<bool> capped;
  for (const ServerTargets& t : d.targets) capped.push_back(t.sm_clock_cap.has_value());
  return capped;
}

// One cap is counted as 12% of 2,000 W = 240 W of the 8,192 W budget (2.9%).
constexpr double kMixOneCap = 0.12 * kMixGpuW / kMixBudgetW;

TEST(MixAwarePolicyTest, BelowTargetCapsNothing) {
  MixAwarePolicy policy{PolicyParams{}};
  for (int t = 0; t < 100; ++t) {
    const Decision d = policy.Step(MixObs(t, 0.91, {0.9, 0.5, 0.7, 0.2}));
    EXPECT_EQ(d.state, "normal");
    EXPECT_EQ(CappedServers(d), std::vector<bool>(5, false));
  }
}

TEST(MixAwarePolicyTest, CapsTheCheapestServersFirstAndOnlyAsManyAsNeeded) {
  MixAwarePolicy policy{PolicyParams{}};
  // Just over one cap's worth above the target: two servers, the two lowest prefill shares.
  const double p = PolicyParams{}.mix_target + 1.5 * kMixOneCap;
  const Decision d = policy.Step(MixObs(0, p, {0.9, 0.5, 0.7, 0.2}));
  EXPECT_EQ(d.state, "lp");
  EXPECT_EQ(CappedServers(d), (std::vector<bool>{false, true, false, true, false}));
  ASSERT_EQ(d.events.size(), 1u);
  EXPECT_NE(d.events[0].reason.find("2 LP servers capped to 1110 MHz"), std::string::npos);
  // The caps ordered count against the excess while they take effect: nothing more is capped.
  const Decision again = policy.Step(MixObs(1, p, {0.9, 0.5, 0.7, 0.2}));
  EXPECT_EQ(CappedServers(again), CappedServers(d));
}

TEST(MixAwarePolicyTest, SparesServersWithABacklog) {
  MixAwarePolicy policy{PolicyParams{}};
  const double p = PolicyParams{}.mix_target + 0.5 * kMixOneCap;
  // Server 3 has the lowest share but requests waiting: server 1 is capped instead.
  const Decision d = policy.Step(MixObs(0, p, {0.9, 0.5, 0.7, 0.2}, {0, 0, 0, 3}));
  EXPECT_EQ(CappedServers(d), (std::vector<bool>{false, true, false, false, false}));
}

TEST(MixAwarePolicyTest, WithoutASignalRanksByGpuPowerAndStillCaps) {
  MixAwarePolicy policy{PolicyParams{}};
  Observation obs = MixObs(0, PolicyParams{}.mix_target + 0.5 * kMixOneCap,
                           {std::nullopt, std::nullopt, std::nullopt, std::nullopt});
  obs.servers[2].gpu_power = core::Watts(900);   // the least compute-bound
  obs.servers[0].gpu_power = core::Watts(3000);  // the most
  // A stale window is no signal either: server 0's old share would rank it first.
  obs.servers[0].serving = ServingSignal{.prefill_share = 0.0, .age = std::chrono::seconds(31)};
  const Decision d = policy.Step(obs);
  // 12% of 900 W is 108 W, less than the excess: the next cheapest (by index on a tie) too.
  EXPECT_EQ(CappedServers(d), (std::vector<bool>{false, true, true, false, false}));
}

TEST(MixAwarePolicyTest, ALostSignalLiftsNoCap) {
  MixAwarePolicy policy{PolicyParams{}};
  const double p = PolicyParams{}.mix_target + 0.5 * kMixOneCap;
  const Decision d = policy.Step(MixObs(0, p, {0.9, 0.5, 0.7, 0.2}));
  EXPECT_EQ(CappedServers(d), (std::vector<bool>{false, false, false, true, false}));
  // The engines go quiet while the row stays above the target: the cap stays.
  for (int t = 1; t < 200; ++t) {
    const Decision later =
        policy.Step(MixObs(t, p, {std::nullopt, std::nullopt, std::nullopt, std::nullopt}));
    EXPECT_TRUE(later.targets[3].sm_clock_cap.has_value()) << "t=" << t;
  }
}

TEST(MixAwarePolicyTest, LiftsOnlyAfterTheActuationDelayAndWithRoom) {
  MixAwarePolicy policy{PolicyParams{}};
  const std::vector<std::optional<double>> shares = {0.9, 0.5, 0.7, 0.2};
  policy.Step(MixObs(0, PolicyParams{}.mix_target + 0.5 * kMixOneCap, shares));
  // Far below the target at once: held until its cap has had the actuation delay to act.
  for (int t = 1; t < 40; ++t) {
    EXPECT_TRUE(policy.Step(MixObs(t, 0.70, shares)).targets[3].sm_clock_cap) << "t=" << t;
  }
  const Decision lifted = policy.Step(MixObs(40, 0.70, shares));
  EXPECT_EQ(lifted.state, "normal");
  EXPECT_FALSE(lifted.targets[3].sm_clock_cap);
}

TEST(MixAwarePolicyTest, KeepsACapWhenLiftingItWouldCrossTheTarget) {
  MixAwarePolicy policy{PolicyParams{}};
  const std::vector<std::optional<double>> shares = {0.9, 0.5, 0.7, 0.2};
  const PolicyParams params;
  policy.Step(MixObs(0, params.mix_target + 0.5 * kMixOneCap, shares));
  // Under the target, but giving back 25% of 2,000 W would not leave mix_hysteresis of room.
  const double p = params.mix_target - params.mix_hysteresis - 0.5 * 0.25 * kMixGpuW / kMixBudgetW;
  for (int t = 1; t < 200; ++t) {
    EXPECT_TRUE(policy.Step(MixObs(t, p, shares)).targets[3].sm_clock_cap) << "t=" << t;
  }
}

TEST(MixAwarePolicyTest, BrakesOverTheBudgetAndCapsHpOnlyAfterEveryLpServer) {
  MixAwarePolicy policy{PolicyParams{}};
  const std::vector<std::optional<double>> shares = {0.9, 0.5, 0.7, 0.2};
  Decision d = policy.Step(MixObs(0, 1.02, shares));
  EXPECT_EQ(d.state, "brake");
  for (const ServerTargets& t : d.targets) EXPECT_TRUE(t.brake);
  // Every LP server is capped (the excess is far beyond four caps); HP is not, yet.
  EXPECT_EQ(CappedServers(d), (std::vector<bool>{true, true, true, true, false}));
  // Released below brake_release, p stays above t2: HP follows after hp_escalation_delay.
  d = policy.Step(MixObs(15, 0.94, shares));
  EXPECT_FALSE(d.targets[4].sm_clock_cap);
  d = policy.Step(MixObs(55, 0.94, shares));
  EXPECT_EQ(d.state, "hp");
  EXPECT_EQ(d.targets[4].sm_clock_cap, PolicyParams{}.hp_t2_clock);
}

TEST(MixAwarePolicyTest, StaleTelemetryLiftsNothing) {
  MixAwarePolicy policy{PolicyParams{}};
  const std::vector<std::optional<double>> shares = {0.9, 0.5, 0.7, 0.2};
  policy.Step(MixObs(0, PolicyParams{}.mix_target + 0.5 * kMixOneCap, shares));
  for (int t = 1; t < 200; ++t) {
    Observation obs = MixObs(t, 0.5, shares);
    obs.telemetry_age = std::chrono::seconds(11);
    EXPECT_TRUE(policy.Step(obs).targets[3].sm_clock_cap) << "t=" << t;
  }
}

// A burst: the row at `base` rises by 0.15 within a second, for 30 s from t = 300 s, falls back,
// and over the next 10 minutes drifts to `after`, which it keeps. Readings in [stale_from,
// stale_to) are stale. The last decision.
struct Stale {
  int from = 0;
  int to = 0;
};
Decision RunBurst(MixAwarePolicy& policy, double base, double after, int until_s,
                  Stale stale = {}) {
  const std::vector<std::optional<double>> shares = {0.9, 0.5, 0.7, 0.2};
  Decision d;
  for (int t = 0; t <= until_s; ++t) {
    const double drift = std::min(1.0, std::max(0, t - 330) / 600.0);
    const double p = t < 300 ? base : t < 330 ? base + 0.15 : base + (after - base) * drift;
    Observation obs = MixObs(t, p, shares);
    if (t >= stale.from && t < stale.to) obs.telemetry_age = std::chrono::seconds(11);
    d = policy.Step(obs);
  }
  return d;
}

int CountCapped(const Decision& d) {
  const std::vector<bool> capped = CappedServers(d);
  return static_cast<int>(std::count(capped.begin(), capped.end(), true));
}

PolicyParams WithoutReserve() {
  PolicyParams params;
  params.mix_reserve_floor = 0;
  params.mix_reserve_memory = std::chrono::seconds(1);
  return params;
}

TEST(MixAwarePolicyTest, ARowThatHasBurstCapsForTheNextBurstBeforeItComes) {
  // A burst at night, from 0.50 to 0.65, calls for no cap. Later the row drifts up to 0.88:
  // under mix_target, and 0.88 plus the 0.05 floor is under the brake.
  MixAwarePolicy forgets{WithoutReserve()};
  EXPECT_EQ(CountCapped(RunBurst(forgets, 0.50, 0.88, 1200)), 0);
  // Remembering that the row rose 0.15 within an actuation delay, the policy keeps that much
  // room under the brake: it caps, the cheapest LP server (the lowest prefill share) first.
  MixAwarePolicy remembers{PolicyParams{}};
  const Decision d = RunBurst(remembers, 0.50, 0.88, 1000);
  EXPECT_EQ(d.state, "lp");
  EXPECT_TRUE(d.targets[3].sm_clock_cap);
  EXPECT_FALSE(d.targets[4].sm_clock_cap) << "HP only once every LP server is capped";
}

TEST(MixAwarePolicyTest, WhereEveryLpCapLeavesTooLittleRoomHpIsCappedToo) {
  // The row stays at 0.88 (these readings do not fall as caps act): every LP cap is ordered and
  // the level is still short of the room for a 0.15 rise, so HP follows after
  // hp_escalation_delay, although p never crosses t2 after the burst.
  MixAwarePolicy policy{PolicyParams{}};
  const Decision d = RunBurst(policy, 0.50, 0.88, 3000);
  EXPECT_EQ(d.state, "hp");
  EXPECT_EQ(d.targets[4].sm_clock_cap, PolicyParams{}.hp_t2_clock);
  // Without the burst behind it the same row caps nothing at all.
  MixAwarePolicy forgets{WithoutReserve()};
  EXPECT_EQ(CountCapped(RunBurst(forgets, 0.50, 0.88, 3000)), 0);
}

TEST(MixAwarePolicyTest, AfterABurstKeepsItsCapsWhereTheLevelLeavesNoRoomForAnother) {
  // The burst from 0.80 to 0.95 caps every LP server. Back at 0.82 the projection alone would
  // lift them one by one (0.07 of room against 500 W each); the room for another 0.15 keeps them.
  MixAwarePolicy forgets{WithoutReserve()};
  EXPECT_EQ(CountCapped(RunBurst(forgets, 0.80, 0.82, 1200)), 0);
  MixAwarePolicy remembers{PolicyParams{}};
  EXPECT_EQ(CountCapped(RunBurst(remembers, 0.80, 0.82, 1200)), 4);
}

TEST(MixAwarePolicyTest, TheRoomKeptForABurstFadesWithItsMemory) {
  // 100 minutes after the burst, at 0.82: with the default memory (8 h) the room kept is still
  // above 0.14, so no cap lifts.
  MixAwarePolicy remembers{PolicyParams{}};
  EXPECT_EQ(CountCapped(RunBurst(remembers, 0.80, 0.82, 330 + 6000)), 4);
  // With a memory of 10 minutes the reserve is back at its floor: every cap has lifted.
  PolicyParams params;
  params.mix_reserve_memory = std::chrono::minutes(10);
  MixAwarePolicy fades{params};
  const Decision d = RunBurst(fades, 0.80, 0.82, 330 + 6000);
  EXPECT_EQ(d.state, "normal");
  EXPECT_EQ(CountCapped(d), 0);
}

TEST(MixAwarePolicyTest, CapsDeeperWhileABurstIsUnderWayAndBackAfterIt) {
  const PolicyParams params;
  MixAwarePolicy policy{params};
  const std::vector<std::optional<double>> shares = {0.9, 0.5, 0.7, 0.2};
  for (int t = 0; t < 300; ++t) policy.Step(MixObs(t, 0.80, shares));
  // A burst to 0.97: every LP server is capped at once and the excess remains while the burst
  // is on, so the LP caps deepen to mix_burst_clock; HP is not capped yet (p over t2 < 40 s).
  Decision d;
  for (int t = 300; t < 335; ++t) d = policy.Step(MixObs(t, 0.97, shares));
  EXPECT_EQ(d.state, "burst");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(d.targets[i].sm_clock_cap, params.mix_burst_clock) << i;
  EXPECT_FALSE(d.targets[4].sm_clock_cap);
  // The burst is over (the row falls back to 0.86): the LP caps return to mix_lp_clock, and
  // stay, for the room the next burst needs.
  for (int t = 335; t < 600; ++t) d = policy.Step(MixObs(t, 0.86, shares));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(d.targets[i].sm_clock_cap, params.mix_lp_clock) << i;
  // Without a burst the same excess caps to mix_lp_clock only: a slow rise to 0.97.
  MixAwarePolicy slow{params};
  for (int t = 0; t <= 3000; ++t) d = slow.Step(MixObs(t, 0.80 + 0.17 * t / 3000, shares));
  for (int i = 0; i < 4; ++i) EXPECT_EQ(d.targets[i].sm_clock_cap, params.mix_lp_clock) << i;
}

TEST(MixAwarePolicyTest, StaleReadingsKeepTheCapsABurstCalledFor) {
  PolicyParams params;
  params.mix_reserve_memory = std::chrono::minutes(10);
  MixAwarePolicy policy{params};
  // The readings go stale right after the burst and read low: nothing lifts, however long,
  // although the reserve alone would have faded (HP too: p over t2 in the burst, then the level
  // short of the reserve, for 40 s).
  EXPECT_EQ(CountCapped(RunBurst(policy, 0.80, 0.60, 330 + 6000, {.from = 331, .to = 330 + 6001})),
            5);
  // Nor do stale readings feed the reserve: a jump seen only on them is no burst.
  MixAwarePolicy blind{PolicyParams{}};
  EXPECT_EQ(CountCapped(RunBurst(blind, 0.50, 0.88, 1200, {.from = 300, .to = 330})), 0);
}

TEST(MixAwarePolicyTest, IsMadeByNameAndItsParametersAreChecked) {
  auto made = MakePolicy("mix-aware", PolicyParams{});
  ASSERT_TRUE(made.has_value());
  EXPECT_EQ((*made)->name(), "mix-aware");
  PolicyParams bad;
  bad.mix_target = 1.1;
  auto rejected = MakePolicy("mix-aware", bad);
  ASSERT_FALSE(rejected.has_value());
  EXPECT_NE(rejected.error().message().find("mix_target"), std::string::npos);
}

}  // namespace
}  // namespace headroom::policy
