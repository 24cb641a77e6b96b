// The named row policies, each a LadderPolicy (ladder_policy.h) built from PolicyParams. All take
// p = row power / provisioned row budget each step; thresholds are fractions of the budget.
// Every policy but `none` has the same power-brake failsafe (brake_threshold, brake_release,
// brake_hold, brake_settle) and the same stale-telemetry rule: with telemetry older than
// stale_after no cap lifts and the brake does not release, because a controller that cannot see
// row power must not assume it fell. Pure functions returning fresh, independent instances.
//
// none         The non-oversubscribed baseline: never caps and never brakes, state "normal"; it
//              still reports p. (Were its row to exceed the budget, the simulator counts that
//              itself: the brake is not part of what this baseline decides.)
// brake-only   Oversubscription guarded by the brake alone. States normal, brake.
// polca        POLCA (brief §3): p > t1: LP to lp_t1_clock; p > t2: LP to lp_t2_clock; still
//              p > t2 after hp_escalation_delay in t2: HP to hp_t2_clock too. Caps set at T lift
//              when p < T - hysteresis (t2-hp and t2 lift together, back to t1). States normal,
//              t1, t2, t2-hp, brake.
// uniform      Priority-blind POLCA: the same thresholds, every server to lp_t1_clock /
// lp_t2_clock.
//              States normal, t1, t2, brake.
// power-cap    Reactive: every GPU's power limit to power_cap_t1 / power_cap_t2 above t1 / t2,
//              instead of a clock cap. States normal, t1, t2, brake.
// polca-ladder Ours (see MakePolcaLadderPolicy). States normal, lp1..lp4, hp, brake.
// mix-aware    Ours: caps only as many LP servers as the projected excess needs, cheapest first
//              by their engines' prefill share and queue (mix_aware_policy.h). States normal,
//              lp, hp, brake.
#ifndef HEADROOM_POLICY_POLICIES_H_
#define HEADROOM_POLICY_POLICIES_H_

#include <memory>
#include <string_view>

#include "policy/ladder_policy.h"
#include "policy/mix_aware_policy.h"
#include "policy/policy_params.h"
#include "policy/row_policy.h"

namespace headroom::policy {

// The policy that never caps: every server uncapped and no brake. Plans compare every other
// policy's latency with it at the same servers and week (the SLO's baseline).
inline constexpr std::string_view kUncappedPolicy = "none";

// Each REQUIRES: ValidateParams(params) is ok (MakePolicy in policy_factory.h checks it).
std::unique_ptr<RowPolicy> MakeNonePolicy(const PolicyParams& params);
std::unique_ptr<RowPolicy> MakeBrakeOnlyPolicy(const PolicyParams& params);
std::unique_ptr<RowPolicy> MakePolcaPolicy(const PolicyParams& params);
std::unique_ptr<RowPolicy> MakeUniformPolicy(const PolicyParams& params);
std::unique_ptr<RowPolicy> MakePowerCapPolicy(const PolicyParams& params);

// polca-ladder: POLCA's premise is that LP work absorbs the cuts so HP work keeps its clocks.
// POLCA gives LP two steps and then caps HP after one actuation delay at T2. This policy spends
// LP's whole tolerance first, in smaller steps, and caps HP late:
//   - four LP rungs: p > ladder_t1..ladder_t4 (0.80, 0.85, 0.89, 0.92) take LP to
//     ladder_lp1..4_clock (1275, 1110, 960, 810 MHz on A100); HP untouched;
//   - HP goes to hp_t2_clock only when p > ladder_hp_threshold (0.95) after the last LP rung has
//     been held for hp_escalation_delay, i.e. once the deepest LP caps have had time to act;
//   - predictive LP rungs: since out-of-band caps take ~40 s to act (brief §2), LP rungs are
//     climbed (and kept) on p projected ladder_predict_horizon ahead along its recent rise
//     (RisePredictor), so a fast rise such as 11.8% in 40 s (brief §1) is met by caps ordered
//     before it crosses the threshold. HP is never capped on a prediction.
// Its cost is LP throughput at deep clocks; the simulator judges whether the HP gain is worth it.
std::unique_ptr<RowPolicy> MakePolcaLadderPolicy(const PolicyParams& params);
// mix-aware (mix_aware_policy.h).
std::unique_ptr<RowPolicy> MakeMixAwarePolicy(const PolicyParams& params);

// The LadderPolicy configurations behind the policies above, for tests and documentation.
LadderPolicyConfig NoneConfig(const PolicyParams& params);
LadderPolicyConfig BrakeOnlyConfig(const PolicyParams& params);
LadderPolicyConfig PolcaConfig(const PolicyParams& params);
LadderPolicyConfig UniformConfig(const PolicyParams& params);
LadderPolicyConfig PowerCapConfig(const PolicyParams& params);
LadderPolicyConfig PolcaLadderConfig(const PolicyParams& params);

}  // namespace headroom::policy

#endif  // HEADROOM_POLICY_POLICIES_H_
