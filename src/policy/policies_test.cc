#include "policy/policies.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace headroom::policy {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr double kBudgetW = 8192;  // a power of two: p * budget / budget == p exactly

// One step of a table-driven scenario: the observation at t_s and what the policy must decide.
// Clocks and power limits are those of the first LP and the first HP server; 0 means none.
struct Row {
  double t_s = 0;
  double p = 0;
  std::string state;
  double lp_mhz = 0;
  double hp_mhz = 0;
  bool brake = false;
  double age_s = 0;
};

Observation Obs(double t_s, double p, double age_s = 0) {
  Observation obs;
  obs.now = core::FromSeconds(t_s);
  obs.budget = core::Watts(kBudgetW);
  obs.row_power = core::Watts(p * kBudgetW);
  obs.telemetry_age = core::FromSeconds(age_s);
  for (ServerPriority priority :
       {ServerPriority::kLow, ServerPriority::kHigh, ServerPriority::kLow}) {
    obs.servers.push_back(ServerObservation{.priority = priority});
  }
  return obs;
}

double ClockOf(const ServerTargets& t) { return t.sm_clock_cap ? t.sm_clock_cap->value() : 0; }
double LimitOf(const ServerTargets& t) { return t.power_limit ? t.power_limit->value() : 0; }

// Runs `rows` through `policy`; each row's state and targets must match. Returns every event.
std::vector<Event> RunScenario(RowPolicy& policy, const std::vector<Row>& rows,
                               bool power_limits = false) {
  std::vector<Event> events;
  for (const Row& row : rows) {
    SCOPED_TRACE(testing::Message() << policy.name() << " at t=" << row.t_s << " p=" << row.p);
    const Decision d = policy.Step(Obs(row.t_s, row.p, row.age_s));
    EXPECT_EQ(d.state, row.state);
    EXPECT_DOUBLE_EQ(d.fraction, row.p);
    const std::vector<std::string> states = policy.states();
    EXPECT_NE(std::find(states.begin(), states.end(), d.state), states.end());
    EXPECT_EQ(d.targets.size(), 3u);
    if (d.targets.size() != 3u) continue;
    const auto value = power_limits ? LimitOf : ClockOf;
    EXPECT_EQ(value(d.targets[0]), row.lp_mhz);
    EXPECT_EQ(value(d.targets[1]), row.hp_mhz);
    EXPECT_EQ(d.targets[2], d.targets[0]) << "both LP servers alike";
    EXPECT_EQ(power_limits ? ClockOf(d.targets[0]) : LimitOf(d.targets[0]), 0) << "other knob";
    for (const ServerTargets& t : d.targets) EXPECT_EQ(t.brake, row.brake);
    events.insert(events.end(), d.events.begin(), d.events.end());
  }
  return events;
}

TEST(PolcaTest, WalksEveryStateUpAndDown) {
  auto polca = MakePolcaPolicy(PolicyParams{});
  const std::vector<Event> events = RunScenario(
      *polca,
      {
          {.t_s = 0, .p = 0.70, .state = "normal"},
          {.t_s = 1, .p = 0.81, .state = "t1", .lp_mhz = 1275},
          {.t_s = 2, .p = 0.88, .state = "t1", .lp_mhz = 1275},
          {.t_s = 3, .p = 0.90, .state = "t2", .lp_mhz = 1110},
          {.t_s = 42, .p = 0.90, .state = "t2", .lp_mhz = 1110},
          {.t_s = 43, .p = 0.90, .state = "t2-hp", .lp_mhz = 1110, .hp_mhz = 1305},
          {.t_s = 44, .p = 1.01, .state = "brake", .lp_mhz = 1110, .hp_mhz = 1305, .brake = true},
          {.t_s = 53, .p = 0.50, .state = "brake", .lp_mhz = 1110, .hp_mhz = 1305, .brake = true},
          // Released after the 10 s hold; braked power lifts nothing during the 10 s settle.
          {.t_s = 54, .p = 0.50, .state = "t2-hp", .lp_mhz = 1110, .hp_mhz = 1305},
          {.t_s = 63, .p = 0.50, .state = "t2-hp", .lp_mhz = 1110, .hp_mhz = 1305},
          {.t_s = 64, .p = 0.85, .state = "t2-hp", .lp_mhz = 1110, .hp_mhz = 1305},
          {.t_s = 65, .p = 0.83, .state = "t1", .lp_mhz = 1275},
          {.t_s = 66, .p = 0.76, .state = "t1", .lp_mhz = 1275},
          {.t_s = 67, .p = 0.74, .state = "normal"},
      });
  const std::vector<std::pair<std::string, std::string>> want = {
      {"normal", "t1"},   {"t1", "t2"},    {"t2", "t2-hp"}, {"t2-hp", "brake"},
      {"brake", "t2-hp"}, {"t2-hp", "t1"}, {"t1", "normal"}};
  ASSERT_EQ(events.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(events[i].from, want[i].first) << i;
    EXPECT_EQ(events[i].to, want[i].second) << i;
  }
  EXPECT_EQ(events[0].at, seconds(1));
  EXPECT_EQ(events[0].reason, "p=0.810 > T1=0.8");
  EXPECT_EQ(events[1].reason, "p=0.900 > T2=0.89");
  EXPECT_EQ(events[2].reason, "p=0.900 > T2=0.89 after 40s in t2");
  EXPECT_EQ(events[3].reason, "p=1.010 > brake=1");
  EXPECT_EQ(events[4].reason, "p=0.500 < release=0.95 after 10s braked");
  EXPECT_EQ(events[5].reason, "p=0.830 < T2-0.05=0.84");
  EXPECT_EQ(events[6].reason, "p=0.740 < T1-0.05=0.75");
}

TEST(PolcaTest, HysteresisAroundT2AndT1) {
  auto polca = MakePolcaPolicy(PolicyParams{});
  RunScenario(*polca,
              {
                  {.t_s = 0, .p = 0.90, .state = "t2", .lp_mhz = 1110},
                  {.t_s = 1, .p = 0.85, .state = "t2", .lp_mhz = 1110},  // T2 - 0.04: no lift
                  {.t_s = 2, .p = 0.87, .state = "t2", .lp_mhz = 1110},
                  {.t_s = 3, .p = 0.83, .state = "t1", .lp_mhz = 1275},  // T2 - 0.06: lift
                  {.t_s = 4, .p = 0.88, .state = "t1", .lp_mhz = 1275},  // below T2: no re-cap
                  {.t_s = 5, .p = 0.76, .state = "t1", .lp_mhz = 1275},  // T1 - 0.04
                  {.t_s = 6, .p = 0.74, .state = "normal"},              // T1 - 0.06
                  {.t_s = 7, .p = 0.80, .state = "normal"},              // not above T1
              });
}

TEST(PolcaTest, JumpsStraightToT2WithOneEvent) {
  auto polca = MakePolcaPolicy(PolicyParams{});
  const auto events = RunScenario(*polca, {{.t_s = 0, .p = 0.912, .state = "t2", .lp_mhz = 1110}});
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].from, "normal");
  EXPECT_EQ(events[0].reason, "p=0.912 > T2=0.89");
}

TEST(PolcaTest, HpEscalationWaitsTheConfiguredDelayAndNeedsPAboveT2) {
  PolicyParams params;
  params.hp_escalation_delay = seconds(20);
  auto polca = MakePolcaPolicy(params);
  RunScenario(
      *polca,
      {
          {.t_s = 100, .p = 0.90, .state = "t2", .lp_mhz = 1110},
          {.t_s = 119.9, .p = 0.95, .state = "t2", .lp_mhz = 1110},
          {.t_s = 120, .p = 0.88, .state = "t2", .lp_mhz = 1110},  // delay over, p not above T2
          {.t_s = 130, .p = 0.89, .state = "t2", .lp_mhz = 1110},  // T2 itself is not above T2
          {.t_s = 131, .p = 0.891, .state = "t2-hp", .lp_mhz = 1110, .hp_mhz = 1305},
      });
}

TEST(PolcaTest, HpEscalationDelayRestartsAfterT2Lifts) {
  auto polca = MakePolcaPolicy(PolicyParams{});
  RunScenario(*polca, {
                          {.t_s = 0, .p = 0.90, .state = "t2", .lp_mhz = 1110},
                          {.t_s = 30, .p = 0.80, .state = "t1", .lp_mhz = 1275},
                          {.t_s = 35, .p = 0.90, .state = "t2", .lp_mhz = 1110},
                          {.t_s = 74, .p = 0.90, .state = "t2", .lp_mhz = 1110},
                          {.t_s = 75, .p = 0.90, .state = "t2-hp", .lp_mhz = 1110, .hp_mhz = 1305},
                      });
}

TEST(PolcaTest, StaleTelemetryNeverLifts) {
  auto polca = MakePolcaPolicy(PolicyParams{});
  RunScenario(
      *polca,
      {
          {.t_s = 0, .p = 0.85, .state = "t1", .lp_mhz = 1275, .age_s = 30},  // tightening is fine
          {.t_s = 1, .p = 0.95, .state = "t2", .lp_mhz = 1110, .age_s = 30},
          {.t_s = 2, .p = 0.50, .state = "t2", .lp_mhz = 1110, .age_s = 10.001},
          {.t_s = 3, .p = 0.50, .state = "t2", .lp_mhz = 1110, .age_s = 600},
          {.t_s = 4, .p = 0.50, .state = "normal", .age_s = 10},  // stale_after itself is fresh
      });
}

TEST(PolcaTest, StaleTelemetryKeepsTheBrake) {
  auto polca = MakePolcaPolicy(PolicyParams{});
  RunScenario(
      *polca,
      {
          {.t_s = 0, .p = 1.05, .state = "brake", .lp_mhz = 1110, .brake = true},
          {.t_s = 20, .p = 0.50, .state = "brake", .lp_mhz = 1110, .brake = true, .age_s = 15},
          {.t_s = 21, .p = 0.50, .state = "t2", .lp_mhz = 1110},
      });
}

TEST(PolcaTest, ConstantsComeFromParams) {
  PolicyParams params;
  params.t1 = 0.70;
  params.t2 = 0.75;
  params.hysteresis = 0.02;
  params.lp_t1_clock = core::Megahertz(1200);
  params.lp_t2_clock = core::Megahertz(900);
  params.hp_t2_clock = core::Megahertz(1000);
  params.hp_escalation_delay = seconds(0);
  auto polca = MakePolcaPolicy(params);
  RunScenario(*polca, {
                          {.t_s = 0, .p = 0.71, .state = "t1", .lp_mhz = 1200},
                          // With no escalation delay, HP is capped as soon as p passes T2.
                          {.t_s = 1, .p = 0.76, .state = "t2-hp", .lp_mhz = 900, .hp_mhz = 1000},
                          {.t_s = 2, .p = 0.74, .state = "t2-hp", .lp_mhz = 900, .hp_mhz = 1000},
                          {.t_s = 3, .p = 0.72, .state = "t1", .lp_mhz = 1200},
                          {.t_s = 4, .p = 0.69, .state = "t1", .lp_mhz = 1200},
                          {.t_s = 5, .p = 0.67, .state = "normal"},
                      });
}

TEST(NonePolicyTest, NeverCapsNorBrakesButReportsP) {
  auto none = MakeNonePolicy(PolicyParams{});
  EXPECT_EQ(none->states(), (std::vector<std::string>{"normal"}));
  const auto events = RunScenario(*none, {
                                             {.t_s = 0, .p = 0.5, .state = "normal"},
                                             {.t_s = 1, .p = 0.95, .state = "normal"},
                                             {.t_s = 2, .p = 1.3, .state = "normal"},
                                             {.t_s = 100, .p = 1.3, .state = "normal"},
                                         });
  EXPECT_TRUE(events.empty());
}

TEST(BrakeOnlyTest, BrakesAllServersHoldsAndReleases) {
  auto brake_only = MakeBrakeOnlyPolicy(PolicyParams{});
  EXPECT_EQ(brake_only->states(), (std::vector<std::string>{"normal", "brake"}));
  const auto events = RunScenario(
      *brake_only,
      {
          {.t_s = 0, .p = 0.99, .state = "normal"},
          {.t_s = 1, .p = 1.0, .state = "normal"},
          {.t_s = 2, .p = 1.01, .state = "brake", .brake = true},
          {.t_s = 11.9, .p = 0.5, .state = "brake", .brake = true},  // held 9.9 s
          {.t_s = 12, .p = 0.96, .state = "brake", .brake = true},   // held, but not below 0.95
          {.t_s = 13, .p = 0.94, .state = "normal"},
          {.t_s = 14, .p = 0.99, .state = "normal"},
      });
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].reason, "p=0.940 < release=0.95 after 11s braked");
}

TEST(BrakeOnlyTest, HoldAndReleaseAreConfigurable) {
  PolicyParams params;
  params.brake_hold = seconds(30);
  params.brake_release = 0.8;
  auto brake_only = MakeBrakeOnlyPolicy(params);
  RunScenario(*brake_only, {
                               {.t_s = 0, .p = 1.01, .state = "brake", .brake = true},
                               {.t_s = 29, .p = 0.5, .state = "brake", .brake = true},
                               {.t_s = 30, .p = 0.85, .state = "brake", .brake = true},
                               {.t_s = 31, .p = 0.79, .state = "normal"},
                           });
}

TEST(UniformTest, CapsHighPriorityServersToo) {
  auto uniform = MakeUniformPolicy(PolicyParams{});
  EXPECT_EQ(uniform->states(), (std::vector<std::string>{"normal", "t1", "t2", "brake"}));
  RunScenario(
      *uniform,
      {
          {.t_s = 0, .p = 0.81, .state = "t1", .lp_mhz = 1275, .hp_mhz = 1275},
          {.t_s = 1, .p = 0.90, .state = "t2", .lp_mhz = 1110, .hp_mhz = 1110},
          {.t_s = 100, .p = 0.95, .state = "t2", .lp_mhz = 1110, .hp_mhz = 1110},
          {.t_s = 101, .p = 0.85, .state = "t2", .lp_mhz = 1110, .hp_mhz = 1110},
          {.t_s = 102, .p = 0.83, .state = "t1", .lp_mhz = 1275, .hp_mhz = 1275},
          {.t_s = 103, .p = 1.02, .state = "brake", .lp_mhz = 1110, .hp_mhz = 1110, .brake = true},
          {.t_s = 113, .p = 0.5, .state = "t2", .lp_mhz = 1110, .hp_mhz = 1110},
          {.t_s = 123, .p = 0.5, .state = "normal"},
      });
}

TEST(PowerCapTest, SetsPowerLimitsOnEveryGpuInsteadOfClocks) {
  auto power_cap = MakePowerCapPolicy(PolicyParams{});
  RunScenario(
      *power_cap,
      {
          {.t_s = 0, .p = 0.70, .state = "normal"},
          {.t_s = 1, .p = 0.81, .state = "t1", .lp_mhz = 360, .hp_mhz = 360},
          {.t_s = 2, .p = 0.90, .state = "t2", .lp_mhz = 310, .hp_mhz = 310},
          {.t_s = 3, .p = 0.85, .state = "t2", .lp_mhz = 310, .hp_mhz = 310},
          {.t_s = 4, .p = 0.80, .state = "t1", .lp_mhz = 360, .hp_mhz = 360},
          {.t_s = 5, .p = 1.01, .state = "brake", .lp_mhz = 310, .hp_mhz = 310, .brake = true},
          {.t_s = 25, .p = 0.70, .state = "t2", .lp_mhz = 310, .hp_mhz = 310},
          {.t_s = 40, .p = 0.70, .state = "normal"},
      },
      /*power_limits=*/true);
}

PolicyParams NoPrediction() {
  PolicyParams params;
  params.ladder_predict_horizon = seconds(0);
  return params;
}

TEST(PolcaLadderTest, SpendsTheLpLadderBeforeCappingHpLate) {
  auto ladder = MakePolcaLadderPolicy(NoPrediction());
  EXPECT_EQ(ladder->states(),
            (std::vector<std::string>{"normal", "lp1", "lp2", "lp3", "lp4", "hp", "brake"}));
  const auto events = RunScenario(
      *ladder,
      {
          {.t_s = 0, .p = 0.79, .state = "normal"},
          {.t_s = 1, .p = 0.81, .state = "lp1", .lp_mhz = 1275},
          {.t_s = 2, .p = 0.86, .state = "lp2", .lp_mhz = 1110},
          {.t_s = 3, .p = 0.90, .state = "lp3", .lp_mhz = 960},
          {.t_s = 4, .p = 0.93, .state = "lp4", .lp_mhz = 810},
          {.t_s = 30, .p = 0.94, .state = "lp4", .lp_mhz = 810},  // HP untouched below 0.95
          {.t_s = 43, .p = 0.96, .state = "lp4", .lp_mhz = 810},  // 39 s in lp4
          {.t_s = 44, .p = 0.96, .state = "hp", .lp_mhz = 810, .hp_mhz = 1305},
          {.t_s = 45, .p = 0.91, .state = "hp", .lp_mhz = 810, .hp_mhz = 1305},
          {.t_s = 46, .p = 0.89, .state = "lp4", .lp_mhz = 810},
          {.t_s = 47, .p = 0.86, .state = "lp3", .lp_mhz = 960},
          {.t_s = 48, .p = 0.70, .state = "normal"},
      });
  ASSERT_EQ(events.size(), 8u);
  EXPECT_EQ(events[4].reason, "p=0.960 > HP=0.95 after 40s in lp4");
}

TEST(PolcaLadderTest, HpWaitsForTheDeepestLpRungEvenOnAJump) {
  auto ladder = MakePolcaLadderPolicy(NoPrediction());
  RunScenario(*ladder, {
                           {.t_s = 0, .p = 0.97, .state = "lp4", .lp_mhz = 810},
                           {.t_s = 39, .p = 0.97, .state = "lp4", .lp_mhz = 810},
                           {.t_s = 40, .p = 0.97, .state = "hp", .lp_mhz = 810, .hp_mhz = 1305},
                       });
}

// A rise of 11.8% in 40 s (brief §1) from a steady 0.75: the predictive ladder caps LP before
// p itself crosses each threshold; the reactive one only after.
TEST(PolcaLadderTest, PredictionOrdersLpCapsAheadOfAFastRise) {
  auto predictive = MakePolcaLadderPolicy(PolicyParams{});
  auto reactive = MakePolcaLadderPolicy(NoPrediction());
  std::optional<double> predictive_lp1_p;
  std::optional<double> reactive_lp1_p;
  double max_hp_clock = 0;
  for (int i = 0; i <= 1600; ++i) {  // 160 s at 100 ms
    const double t = 0.1 * i;
    const double p = t < 60 ? 0.75 : std::min(0.94, 0.75 + 0.118 / 40 * (t - 60));
    const Decision a = predictive->Step(Obs(t, p));
    const Decision b = reactive->Step(Obs(t, p));
    if (!predictive_lp1_p && a.state != "normal") predictive_lp1_p = p;
    if (!reactive_lp1_p && b.state != "normal") reactive_lp1_p = p;
    max_hp_clock = std::max(max_hp_clock, ClockOf(a.targets[1]));
  }
  ASSERT_TRUE(predictive_lp1_p.has_value());
  ASSERT_TRUE(reactive_lp1_p.has_value());
  EXPECT_LT(*predictive_lp1_p, 0.79);
  EXPECT_GT(*reactive_lp1_p, 0.80);
  EXPECT_EQ(max_hp_clock, 0) << "HP is never capped on a prediction";
}

TEST(PolcaLadderTest, SteadyNoisyPowerIsNotMistakenForARise) {
  auto ladder = MakePolcaLadderPolicy(PolicyParams{});
  for (int i = 0; i < 6000; ++i) {  // 10 min of +-1.5% swings every 100 ms around 0.77
    const double p = 0.77 + (i % 2 == 0 ? 0.015 : -0.015);
    ASSERT_EQ(ladder->Step(Obs(0.1 * i, p)).state, "normal") << "at step " << i;
  }
}

TEST(LadderPolicyDeathTest, RejectsZeroBudget) {
  auto polca = MakePolcaPolicy(PolicyParams{});
  Observation obs = Obs(0, 0.5);
  obs.budget = core::Watts(0);
  EXPECT_DEATH(polca->Step(obs), "budget");
}

TEST(LadderPolicyDeathTest, RejectsTimeRunningBackwards) {
  auto polca = MakePolcaPolicy(PolicyParams{});
  polca->Step(Obs(10, 0.5));
  EXPECT_DEATH(polca->Step(Obs(9, 0.5)), "backwards");
}

}  // namespace
}  // namespace headroom::policy
