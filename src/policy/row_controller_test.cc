#include "policy/row_controller.h"

#include <gtest/gtest.h>

namespace headroom::policy {
namespace {

using std::chrono::seconds;

// Returns the targets the test sets, and keeps the observation it was given.
class ScriptedPolicy final : public RowPolicy {
 public:
  std::string name() const override { return "scripted"; }
  std::vector<std::string> states() const override { return {"normal"}; }
  using RowPolicy::Step;
  void Step(const Observation& obs, Decision* out) override {
    seen = obs;
    *out = {.targets = next, .state = "normal", .events = {}, .fraction = obs.Fraction()};
  }
  std::vector<ServerTargets> next = std::vector<ServerTargets>(2);
  Observation seen;
};

constexpr ServerTargets kCap1275{.sm_clock_cap = core::Megahertz(1275)};

ServerTargets Cap(double mhz) { return {.sm_clock_cap = core::Megahertz(mhz)}; }

// An A100's clock range (data/hardware/a100-80gb-sxm.yaml) on a grid of `step_mhz` (15 in the
// catalog).
model::GpuSpec A100OnGrid(double step_mhz = 15) {
  model::GpuSpec gpu;
  gpu.name = "a100-80gb-sxm";
  gpu.sm_clock_min = core::Megahertz(210);
  gpu.sm_clock_max = core::Megahertz(1410);
  gpu.sm_clock_step = core::Megahertz(step_mhz);
  return gpu;
}

class RowControllerTest : public ::testing::Test {
 protected:
  RowController Make(ControlSettings settings = {}, double clock_step_mhz = 15) {
    const ControlledServer server{.priority = ServerPriority::kLow,
                                  .rated_power = core::Watts(6500),
                                  .non_gpu_power = core::Watts(3300),
                                  .gpu = A100OnGrid(clock_step_mhz)};
    return RowController(policy_, settings, {server, server});
  }
  // Both servers reachable, reporting `gpu_w` each and holding nothing.
  RowView View(double now_s, double gpu_w, std::optional<double> metered = std::nullopt) {
    RowView v;
    v.now = core::FromSeconds(now_s);
    v.budget = core::Watts(13000);
    if (metered) v.metered = core::Watts(*metered);
    for (int i = 0; i < 2; ++i) {
      ServerReport r;
      r.gpu_power = core::Watts(gpu_w);
      r.holds = ServerTargets{};
      v.servers.push_back(std::move(r));
    }
    return v;
  }
  ScriptedPolicy policy_;
};

TEST_F(RowControllerTest, CountsEachServerConservatively) {
  RowController row = Make();
  RowStep step = row.Step(View(0, 2000));
  EXPECT_EQ(step.counted[0].as, "reported");
  EXPECT_DOUBLE_EQ(step.counted[0].watts.value(), 5300);
  EXPECT_DOUBLE_EQ(policy_.seen.row_power.value(), 10600) << "no meter: the servers' sum";
  RowView v = View(1, 2000, 9000.0);
  v.servers[1].reachable = false;
  step = row.Step(v);
  EXPECT_EQ(step.counted[1].as, "rated-max");
  EXPECT_DOUBLE_EQ(step.counted[1].watts.value(), 6500);
  EXPECT_DOUBLE_EQ(policy_.seen.row_power.value(), 9000) << "the meter when there is one";
  // Negative, or beyond 1.25x what the GPUs can draw (6500 - 3300 W): not believed.
  for (double gpu_w : {-2000.0, 4001.0}) {
    step = row.Step(View(2, gpu_w));
    EXPECT_EQ(step.counted[0].as, "implausible") << gpu_w;
    EXPECT_DOUBLE_EQ(step.counted[0].watts.value(), 6500);
    EXPECT_FALSE(step.counted[0].why.empty());
  }
  // Unreachable after a report above the rated maximum (within the margin): the higher counts.
  row.Step(View(3, 3900));
  v = View(4, 0);
  v.servers[0].reachable = false;
  step = row.Step(v);
  EXPECT_EQ(step.counted[0].as, "last-value");
  EXPECT_DOUBLE_EQ(step.counted[0].watts.value(), 7200);
}

TEST_F(RowControllerTest, RestartHoldKeepsWhatServersHeldAtFirstSight) {
  RowController row = Make({.restart_hold = seconds(5)});
  RowView v = View(0, 1000);
  v.servers[1].holds = kCap1275;
  RowStep step = row.Step(v);
  ASSERT_EQ(step.synced.size(), 2u);
  EXPECT_TRUE(step.holding);
  EXPECT_EQ(step.decision.targets[1], kCap1275) << "held, though the policy lifts it";
  EXPECT_FALSE(step.changed[1]);
  v.now = seconds(5);
  step = row.Step(v);
  EXPECT_FALSE(step.holding);
  EXPECT_EQ(step.decision.targets[1], ServerTargets{});
  EXPECT_TRUE(step.changed[1]) << "the lift is sent once the hold ends";
}

TEST_F(RowControllerTest, ChangesAreJudgedAtTheAgentsReadBackTolerance) {
  RowController row = Make();
  row.Step(View(0, 1000));
  policy_.next[0] = kCap1275;
  RowStep step = row.Step(View(1, 1000));
  EXPECT_TRUE(step.changed[0]);
  EXPECT_FALSE(step.changed[1]);
  const ServerTargets read_back{.sm_clock_cap = core::Megahertz(1270)};  // on the clock grid
  row.Accepted(0, read_back);
  RowView held = View(2, 1000);
  held.servers[0].holds = read_back;
  step = row.Step(held);
  EXPECT_FALSE(step.changed[0]);
  EXPECT_TRUE(step.reasserted.empty());
  // A server without a lease holding something else lost its caps: believed, then re-sent.
  RowView v = View(3, 1000);
  v.servers[0].has_lease = false;
  step = row.Step(v);
  ASSERT_EQ(step.reasserted.size(), 1u);
  EXPECT_TRUE(step.changed[0]);
}

// Finding 1 of issue 44: a server that holds a lease, but not the caps it accepted (another
// controller, a person's PUT or a replayed request lifted them), is believed and re-sent to,
// and counts as unconfirmed; while a change is on its way it is not.
TEST_F(RowControllerTest, WhatAServerHoldsIsAssertedWhateverLeaseItHas) {
  RowController row = Make();
  policy_.next = {kCap1275, kCap1275};
  RowView v = View(0, 1000);
  row.Step(v);
  row.Accepted(0, kCap1275);
  row.Accepted(1, kCap1275);
  for (ServerReport& r : v.servers) r.holds = kCap1275;
  v.now = seconds(1);
  RowStep step = row.Step(v);
  EXPECT_TRUE(step.reasserted.empty());
  EXPECT_FALSE(step.changed[0]);
  EXPECT_FALSE(row.Unconfirmed(0, v.servers[0]));
  // Someone lifts server 0's cap with a lease of its own.
  v.now = seconds(2);
  v.servers[0].holds = ServerTargets{};
  v.servers[0].has_lease = true;
  step = row.Step(v);
  ASSERT_EQ(step.reasserted, std::vector<size_t>{0});
  EXPECT_TRUE(step.changed[0]) << "the cap is sent again";
  EXPECT_FALSE(step.changed[1]);
  EXPECT_TRUE(row.Unconfirmed(0, v.servers[0]));
  // A change on its way: the agent still shows what it held before.
  row.Accepted(0, {.sm_clock_cap = core::Megahertz(1110)});
  for (bool pending : {true, false}) {
    v.now += seconds(1);
    v.servers[0].holds = kCap1275;
    v.servers[0].pending = pending;
    v.servers[0].command_in_flight = !pending;
    step = row.Step(v);
    EXPECT_TRUE(step.reasserted.empty()) << pending;
  }
}

TEST_F(RowControllerTest, AServerThatDoesNotTakeItsTargetIsNamedAfterConvergeWithin) {
  RowController row = Make({.converge_within = seconds(20)});
  policy_.next = {kCap1275, ServerTargets{}};
  for (int t = 0; t <= 25; ++t) {
    RowView v = View(t, 1000);  // server 0 never shows the cap it accepts
    const RowStep& step = row.Step(v);
    row.Accepted(0, kCap1275);
    EXPECT_EQ(step.unconverged, t >= 20 ? std::vector<size_t>{0} : std::vector<size_t>{}) << t;
  }
  // It takes it: named no more. An unreachable server is not unconverged either.
  RowView v = View(26, 1000);
  v.servers[0].holds = kCap1275;
  EXPECT_TRUE(row.Step(v).unconverged.empty());
  policy_.next[0] = {.sm_clock_cap = core::Megahertz(1110)};
  for (int t = 27; t <= 60; ++t) {
    RowView u = View(t, 1000);
    u.servers[0].reachable = false;
    EXPECT_TRUE(row.Step(u).unconverged.empty()) << t;
  }
}

// Finding 5 of issue 44: a server whose GPUs report less than they draw idle (0 W) is counted
// at its rated maximum, not at its report.
TEST_F(RowControllerTest, ServerReportingBelowItsIdleFloorCountsAtItsRatedMaximum) {
  const ControlledServer server{.priority = ServerPriority::kLow,
                                .rated_power = core::Watts(6500),
                                .non_gpu_power = core::Watts(3300),
                                .gpu_idle_floor = IdleFloor(8, core::Watts(63)),
                                .gpu = A100OnGrid()};
  RowController row(policy_, {}, {server, server});
  RowView v = View(0, 600);
  v.servers[1].gpu_power = core::Watts(0);
  const RowStep& step = row.Step(v);
  EXPECT_EQ(step.counted[0].as, "reported");
  EXPECT_EQ(step.counted[1].as, "implausible");
  EXPECT_DOUBLE_EQ(step.counted[1].watts.value(), 6500);
  EXPECT_NE(step.counted[1].why.find("less than the 252 W they draw idle"), std::string::npos)
      << step.counted[1].why;
  EXPECT_DOUBLE_EQ(policy_.seen.row_power.value(), 3900 + 6500);
}

// Issue 46: targets are compared as the agent compares them, on the server's own clock grid
// (policy::SameTargets), not within a fixed 8 MHz (half the A100's step).
TEST_F(RowControllerTest, TargetsAreComparedOnTheServersOwnClockGrid) {
  // A 5 MHz grid: a step apart is another target though within 8 MHz; half a step is not.
  RowController fine = Make({}, 5);
  policy_.next = {Cap(1405), Cap(1402)};
  RowView v = View(0, 2000);
  v.servers[0].holds = v.servers[1].holds = Cap(1400);
  const RowStep& changes = fine.Step(v);
  ASSERT_EQ(changes.synced.size(), 2u);
  EXPECT_TRUE(changes.changed[0]) << "1405 MHz is the next clock after 1400 on this grid";
  EXPECT_FALSE(changes.changed[1]) << "1402 MHz locks as 1400 on this grid";
  // A 30 MHz grid: 1367 and 1394 MHz both lock as 1380, 27 MHz apart.
  RowController coarse = Make({}, 30);
  policy_.next = {Cap(1367), Cap(1367)};
  v.servers[0].holds = v.servers[1].holds = Cap(1367);
  coarse.Step(v);
  RowView u = View(1, 2000);
  u.servers[0].holds = Cap(1394);
  u.servers[1].holds = Cap(1350);
  const RowStep& holds = coarse.Step(u);
  EXPECT_EQ(holds.reasserted, std::vector<size_t>{1}) << "only 1350 MHz is another clock";
  EXPECT_FALSE(holds.changed[0]);
  EXPECT_TRUE(holds.changed[1]);
}

TEST_F(RowControllerTest, EscalatesWhenCapsDoNotTakeOverBudgetAndCountsBrakeEventsOnce) {
  RowController row = Make({.escalate_after = seconds(10), .brake_release = 0.95});
  policy_.next = {kCap1275, kCap1275};
  for (int t = 0; t <= 10; ++t) {
    RowView v = View(t, 0, 14000.0);  // p 1.08
    v.servers[0].pending = true;      // its cap still waiting for its actuation delay
    RowStep step = row.Step(v);
    EXPECT_EQ(step.state, t < 10 ? "normal" : "escalated") << t;
    EXPECT_EQ(step.decision.targets[1].brake, t == 10) << t;
    EXPECT_EQ(step.brake_event, t == 10) << t;
    if (t == 0) {
      row.Accepted(0, kCap1275);
      row.Accepted(1, kCap1275);
    }
  }
  EXPECT_EQ(row.brake_events(), 1u);
  // The policy braking as well, while escalated, is not a second event.
  policy_.next[0].brake = true;
  EXPECT_FALSE(row.Step(View(11, 0, 13500.0)).brake_event);
  policy_.next[0].brake = false;
  RowStep step = row.Step(View(12, 0, 12000.0));  // p 0.92 < brake_release
  EXPECT_EQ(step.state, "normal");
  EXPECT_FALSE(step.decision.targets[1].brake);
  EXPECT_EQ(row.brake_events(), 1u);
  policy_.next[0].brake = true;
  EXPECT_TRUE(row.Step(View(13, 0, 12000.0)).brake_event) << "a new brake is a new event";
}

TEST_F(RowControllerTest, ALoweredBudgetIsMetWithinItsTimeWhileTheBrakeGuardsTheOneBefore) {
  RowController row = Make({.escalate_after = seconds(10), .brake_release = 0.95});
  RowStep step = row.Step(View(0, 0, 11000.0));
  EXPECT_DOUBLE_EQ(step.budget.value(), 13000);
  EXPECT_FALSE(step.complying);
  // The grid asks for 25% less, to be met within 60 s: the policy sees the lowered budget at
  // once (p 1.13), its brake the provisioned one until then (0.85).
  const auto lowered = [&](double now_s, double metered) {
    RowView v = View(now_s, 0, metered);
    v.requested = core::Watts(9750);
    v.comply_within = seconds(60);
    v.servers[0].pending = true;  // caps on their way
    return v;
  };
  step = row.Step(lowered(1, 11000));
  EXPECT_DOUBLE_EQ(policy_.seen.budget.value(), 9750);
  EXPECT_DOUBLE_EQ(policy_.seen.brake_budget.value(), 13000);
  EXPECT_DOUBLE_EQ(policy_.seen.provisioned.value(), 13000);
  EXPECT_NEAR(policy_.seen.BrakeFraction(), 11000.0 / 13000, 1e-12);
  EXPECT_TRUE(step.complying);
  EXPECT_FALSE(row.Resting()) << "a step skipped now could miss the deadline";
  // Over the lowered budget with caps pending for longer than escalate_after: no escalation
  // while complying (escalation is a brake, and guards what the brake guards).
  for (int t = 2; t <= 60; ++t) {
    step = row.Step(lowered(t, 11000));
    EXPECT_EQ(step.state, "normal") << t;
    EXPECT_EQ(step.complying, t < 61) << t;
  }
  // The time is up: the brake and escalation guard the lowered budget.
  step = row.Step(lowered(61, 11000));
  EXPECT_FALSE(step.complying);
  EXPECT_DOUBLE_EQ(policy_.seen.brake_budget.value(), 9750);
  for (int t = 62; t <= 71; ++t) step = row.Step(lowered(t, 11000));
  EXPECT_EQ(step.state, "escalated") << "caps that do not meet it are the brake's to meet";
  // Back to the provisioned budget: in force at once.
  RowView back = View(72, 0, 9000.0);
  step = row.Step(back);
  EXPECT_DOUBLE_EQ(step.budget.value(), 13000);
  EXPECT_DOUBLE_EQ(policy_.seen.brake_budget.value(), 13000);
  EXPECT_FALSE(step.complying);
}

TEST_F(RowControllerTest, ALoweredBudgetLoweredAgainKeepsTheFirstGuardAndARaiseEndsIt) {
  RowController row = Make();
  row.Step(View(0, 0, 9000.0));
  RowView v = View(1, 0, 9000.0);
  v.requested = core::Watts(11000);
  v.comply_within = seconds(30);
  EXPECT_TRUE(row.Step(v).complying);
  v.now = seconds(20);
  v.requested = core::Watts(10000);
  RowStep step = row.Step(v);
  EXPECT_TRUE(step.complying);
  EXPECT_DOUBLE_EQ(step.brake_budget.value(), 13000) << "the budget before the first cut";
  v.now = seconds(49);
  EXPECT_TRUE(row.Step(v).complying) << "30 s from the second cut";
  v.now = seconds(50);
  EXPECT_FALSE(row.Step(v).complying);
  // No time to comply: in force at once. A requested budget above the provisioned is not.
  v.now = seconds(51);
  v.requested = core::Watts(9000);
  v.comply_within = core::Duration::zero();
  step = row.Step(v);
  EXPECT_FALSE(step.complying);
  EXPECT_DOUBLE_EQ(step.brake_budget.value(), 9000);
  v.now = seconds(52);
  v.requested = core::Watts(20000);
  EXPECT_DOUBLE_EQ(row.Step(v).budget.value(), 13000);
}

TEST_F(RowControllerTest, LiftsAreReleasedWithinTheRampLimitOneWindowAtATime) {
  // Each server's GPUs may rise by 3200 - 1000 W when lifted; the window allows 1000 W.
  RowController row = Make({.ramp_up_w_per_s = 100, .ramp_window = seconds(10)});
  // The servers report holding what they were last asked.
  std::vector<ServerTargets> held = {kCap1275, kCap1275};
  const auto view = [&](double now_s) {
    RowView v = View(now_s, 1000);
    for (size_t i = 0; i < 2; ++i) v.servers[i].holds = held[i];
    return v;
  };
  policy_.next = held;
  RowStep step = row.Step(view(0));
  // The policy lifts both: one now (one lift at a time always goes), the other held.
  policy_.next = {ServerTargets{}, ServerTargets{}};
  step = row.Step(view(1));
  EXPECT_TRUE(step.changed[0]);
  EXPECT_FALSE(step.changed[1]);
  EXPECT_EQ(step.decision.targets[1], kCap1275) << "held: what it accepted";
  EXPECT_EQ(step.ramp_held, std::vector<size_t>{1});
  EXPECT_FALSE(row.Resting()) << "a step skipped would never release it";
  row.Accepted(0, ServerTargets{});
  held[0] = ServerTargets{};
  for (int t = 2; t <= 10; ++t) {
    step = row.Step(view(t));
    EXPECT_FALSE(step.changed[1]) << t;
  }
  step = row.Step(view(11));
  EXPECT_TRUE(step.changed[1]) << "the window has passed";
  EXPECT_TRUE(step.ramp_held.empty());
  row.Accepted(1, ServerTargets{});
  held[1] = ServerTargets{};
  // A brake is never held back, nor a cap that tightens.
  policy_.next = {ServerTargets{.brake = true}, kCap1275};
  step = row.Step(view(12));
  EXPECT_TRUE(step.changed[0] && step.changed[1]);
}

TEST_F(RowControllerTest, TheLoadsOwnRampBeyondTheLimitIsNotedOnce) {
  RowController row = Make({.ramp_up_w_per_s = 100, .ramp_window = seconds(10)});
  EXPECT_FALSE(row.Step(View(0, 1000)).load_ramp);
  EXPECT_FALSE(row.Step(View(5, 1400)).load_ramp) << "800 W in 5 s: within 1000 W a window";
  EXPECT_TRUE(row.Step(View(6, 1600)).load_ramp) << "1200 W within the window";
  EXPECT_FALSE(row.Step(View(7, 1700)).load_ramp) << "the same ramp";
  EXPECT_EQ(row.load_ramps(), 1u);
  EXPECT_FALSE(row.Step(View(30, 1700)).load_ramp);
  EXPECT_TRUE(row.Step(View(31, 2400)).load_ramp) << "a new one";
  EXPECT_EQ(row.load_ramps(), 2u);
}

}  // namespace
}  // namespace headroom::policy
