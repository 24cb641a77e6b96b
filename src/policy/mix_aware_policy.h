// MixAwarePolicy ("mix-aware", ours): caps only as many low-priority servers as the row's
// projected excess needs, the cheapest first, where "cheap" is what each server's serving engine
// reports. Not thread-safe (thread-compatible, like RowPolicy).
//
// Why: POLCA caps every LP server at T1, although what a clock cap costs depends on what a server
// is doing. Decode steps are memory-bound (a lower clock saves watts at almost no latency cost),
// prefill is compute-bound (the cap costs latency in proportion), and a server with requests
// waiting passes any slowdown on to all of them. In an oversubscribed row the mean sits above T1,
// so POLCA holds every LP server capped much of the day for a budget that is crossed only at the
// peaks.
//
// Rules, each step (p = row power / budget; keys of PolicyParams in brackets):
//   1. The brake (brake_threshold, brake_release, brake_hold) as in every policy.
//   2. The row is projected one actuation delay ahead along its recent rise [mix_predict_horizon,
//      ladder_trend_window], less the savings of caps ordered within that delay (their GPUs do
//      not show them yet) plus what lifts ordered within it will give back.
//   3. Above [mix_target], or with the row's level (p averaged over [ladder_trend_window]) less
//      than the burst reserve under [brake_threshold], uncapped LP servers are capped to
//      [mix_lp_clock] in order of cost, each counted as saving [mix_cap_saving] of its GPUs'
//      power (the least a cap saves), until both are met. The reserve (BurstReserve) is the
//      largest rise above the level the row has made within one actuation delay, remembered for
//      [mix_reserve_memory], at least [mix_reserve_floor]: the room the next burst needs before
//      the caps ordered at its start can act. Cost: the engine's prefill share of tokens (a
//      fresh signal, [mix_signal_stale]); without one, the GPUs' power over what they can draw (a
//      compute-bound server draws near its maximum). A server with requests waiting comes after
//      every server without.
//   4. While a burst is under way (p, averaged over a quarter of the trend window, stands
//      [mix_burst_rise] above the lowest level of the last actuation delay) and every LP server
//      is capped with the row still over its target or reserve, the LP caps deepen to
//      [mix_burst_clock] (state "burst"). They return to [mix_lp_clock] once the burst is over,
//      held at least one actuation delay, on a fresh reading with the brake off and settled.
//   5. With every LP server capped and p still above [t2], or the level still short of the
//      reserve, for [hp_escalation_delay], HP servers are capped to [hp_t2_clock] (POLCA's
//      escalation); they lift when p < t2 - [hysteresis] with [mix_hysteresis] of room beside the
//      reserve.
//   6. Caps lift only on a fresh reading, with the brake off and settled [brake_settle], HP
//      first, then LP servers most costly first once held one actuation delay, each only while
//      the projection plus what it gives back (mix_lift_return of its present GPU power, the most
//      a cap can have saved) stays [mix_hysteresis] under the target, and the level plus it and
//      the reserve as far under the brake. Stale readings do not feed the reserve. A missing or
//      stale engine signal changes only the order, never whether a cap lifts.
//   7. One Event when the state (normal, lp, burst, hp, brake) changes.
#ifndef HEADROOM_POLICY_MIX_AWARE_POLICY_H_
#define HEADROOM_POLICY_MIX_AWARE_POLICY_H_

#include <optional>
#include <string>
#include <vector>

#include "core/time.h"
#include "policy/brake_guard.h"
#include "policy/burst_reserve.h"
#include "policy/policy_params.h"
#include "policy/rise_predictor.h"
#include "policy/row_policy.h"

namespace headroom::policy {

class MixAwarePolicy final : public RowPolicy {
 public:
  // REQUIRES: ValidateParams(params) is ok.
  explicit MixAwarePolicy(const PolicyParams& params);

  std::string name() const override { return "mix-aware"; }
  std::vector<std::string> states() const override;
  using RowPolicy::Step;
  void Step(const Observation& obs, Decision* out) override;

  // What capping server `server` of `obs` costs, lower first (rule 3); for tests and docs.
  double Cost(const ServerObservation& server) const;

 private:
  struct ServerState {
    bool capped = false;
    std::optional<core::Duration> changed_at;  // when the cap was last ordered or lifted
    double moved_w = 0;  // what that order was counted to move the row's power by
  };

  std::string State(bool braked) const;
  bool InDelay(const ServerState& s, core::Duration now) const;
  double PendingWatts(core::Duration now) const;  // in the reading's future, signed
  // Watts over the target (positive: caps are needed) by the projection and by the reserve.
  double ExcessWatts(double predicted, double budget_w, double pending_w) const;
  void CapCheapest(const Observation& obs, double excess_w);
  void LiftCostliest(const Observation& obs, double room_w);
  bool AllLpCapped(const Observation& obs) const;
  // The row's level plus the burst reserve, over the brake (a share of the budget the brake
  // guards; > 0: short).
  double ReserveShortfall() const;
  // What a capped LP server is capped to: mix_burst_clock while the caps are deepened.
  core::Megahertz LpClock() const;
  bool UpdateHp(const Observation& obs, double p, bool may_lift);
  void UpdateBurst(const Observation& obs, double excess_w, bool may_lift);

  PolicyParams params_;
  BrakeGuard brake_;
  RisePredictor predictor_;
  BurstReserve reserve_;
  std::vector<ServerState> servers_;
  bool hp_capped_ = false;
  std::optional<core::Duration> deep_since_;  // the LP caps at mix_burst_clock since
  std::optional<core::Duration> above_t2_since_;
  std::optional<core::Duration> last_now_;
  std::vector<size_t> order_;  // scratch for ranking
  // This step's provisioned budget and the budget its brake guards (Observation).
  double provisioned_w_ = 1;
  double brake_budget_w_ = 1;
};

}  // namespace headroom::policy

#endif  // HEADROOM_POLICY_MIX_AWARE_POLICY_H_
