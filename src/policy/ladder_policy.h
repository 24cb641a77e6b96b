// LadderPolicy: the RowPolicy that every named policy (policies.h) is an instance of: a
// CappingLadder of rungs, an optional BrakeGuard, an optional RisePredictor for predictive rungs,
// and the rules that tie them together. Not thread-safe (thread-compatible, like RowPolicy).
//
// Rules, in order, each step:
//   1. The brake engages when p > brake threshold; it releases when p < release, it has been
//      held the minimum time, and the reading is fresh.
//   2. The ladder may always climb. It steps down (lifts caps) only when the reading is fresh
//      (telemetry_age <= stale_after), the brake is off, and at least `brake_settle` has passed
//      since the brake last released: under and just after the brake, row power shows the brake,
//      not the demand. So after a release the policy returns to the caps the present p calls
//      for, by the usual hysteresis, once that settle time has passed.
//   3. Every server gets its priority's targets on the present rung, plus the brake when on.
//   4. One Event when the state name ("brake" while braked, else the rung's) changes.
#ifndef HEADROOM_POLICY_LADDER_POLICY_H_
#define HEADROOM_POLICY_LADDER_POLICY_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/time.h"
#include "policy/brake_guard.h"
#include "policy/capping_ladder.h"
#include "policy/rise_predictor.h"
#include "policy/row_policy.h"

namespace headroom::policy {

struct LadderPolicyConfig {
  std::string name;
  std::vector<Rung> rungs = {};
  std::optional<BrakeParams> brake = {};  // absent: the policy never brakes
  core::Duration brake_settle{0};
  core::Duration stale_after = std::chrono::seconds(10);
  // Used only when some rung is predictive (RisePredictor).
  core::Duration trend_window = std::chrono::seconds(20);
  core::Duration predict_horizon{0};
};

class LadderPolicy final : public RowPolicy {
 public:
  // REQUIRES: as CappingLadder, BrakeGuard and RisePredictor require of their parts.
  explicit LadderPolicy(LadderPolicyConfig config);

  std::string name() const override { return config_.name; }
  std::vector<std::string> states() const override;
  using RowPolicy::Step;
  void Step(const Observation& obs, Decision* out) override;
  // In the normal state with the brake off and no predictor (which learns from every step):
  // the first rung's entry and the brake's threshold, the first powers that move it.
  double QuietBelow() const override;

 private:
  const std::string& State() const;
  bool Settling(core::Duration now) const;

  LadderPolicyConfig config_;
  CappingLadder ladder_;
  std::optional<BrakeGuard> brake_;
  std::optional<RisePredictor> predictor_;
  std::optional<core::Duration> last_now_;
  // Step's, kept so that a step allocates nothing.
  std::string before_;
  std::vector<std::string> reasons_;
};

}  // namespace headroom::policy

#endif  // HEADROOM_POLICY_LADDER_POLICY_H_
