#include "policy/policies.h"

#include <utility>

#include "core/check.h"

namespace headroom::policy {
namespace {

// The brake, settle and stale rules every policy but `none` shares.
LadderPolicyConfig Base(std::string name, const PolicyParams& params) {
  HEADROOM_CHECK(ValidateParams(params).has_value()) << name << ": invalid policy parameters";
  return LadderPolicyConfig{
      .name = std::move(name),
      .rungs = {},
      .brake = BrakeParams{.threshold = params.brake_threshold,
                           .release = params.brake_release,
                           .hold = params.brake_hold},
      .brake_settle = params.brake_settle,
      .stale_after = params.stale_after,
      .trend_window = params.ladder_trend_window,
      .predict_horizon = core::Duration::zero(),
  };
}

Rung MakeRung(std::string state, std::string threshold, double enter, const PolicyParams& params,
              ServerTargets lp, ServerTargets hp) {
  return Rung{.state = std::move(state),
              .threshold = std::move(threshold),
              .enter = enter,
              .dwell = core::Duration::zero(),
              .exit = enter - params.hysteresis,
              .predictive = false,
              .lp = lp,
              .hp = hp};
}

ServerTargets Clock(core::Megahertz f) { return ServerTargets{.sm_clock_cap = f}; }
ServerTargets PowerLimit(core::Watts w) { return ServerTargets{.power_limit = w}; }

}  // namespace

LadderPolicyConfig NoneConfig(const PolicyParams& params) {
  LadderPolicyConfig config = Base(std::string(kUncappedPolicy), params);
  config.brake.reset();
  return config;
}

LadderPolicyConfig BrakeOnlyConfig(const PolicyParams& params) {
  return Base("brake-only", params);
}

LadderPolicyConfig PolcaConfig(const PolicyParams& params) {
  LadderPolicyConfig config = Base("polca", params);
  const PolicyParams& p = params;
  config.rungs.push_back(MakeRung("t1", "T1", p.t1, p, Clock(p.lp_t1_clock), {}));
  config.rungs.push_back(MakeRung("t2", "T2", p.t2, p, Clock(p.lp_t2_clock), {}));
  Rung hp = MakeRung("t2-hp", "T2", p.t2, p, Clock(p.lp_t2_clock), Clock(p.hp_t2_clock));
  hp.dwell = p.hp_escalation_delay;
  config.rungs.push_back(std::move(hp));
  return config;
}

LadderPolicyConfig UniformConfig(const PolicyParams& params) {
  LadderPolicyConfig config = Base("uniform", params);
  const PolicyParams& p = params;
  config.rungs.push_back(MakeRung("t1", "T1", p.t1, p, Clock(p.lp_t1_clock), Clock(p.lp_t1_clock)));
  config.rungs.push_back(MakeRung("t2", "T2", p.t2, p, Clock(p.lp_t2_clock), Clock(p.lp_t2_clock)));
  return config;
}

LadderPolicyConfig PowerCapConfig(const PolicyParams& params) {
  LadderPolicyConfig config = Base("power-cap", params);
  const PolicyParams& p = params;
  config.rungs.push_back(
      MakeRung("t1", "T1", p.t1, p, PowerLimit(p.power_cap_t1), PowerLimit(p.power_cap_t1)));
  config.rungs.push_back(
      MakeRung("t2", "T2", p.t2, p, PowerLimit(p.power_cap_t2), PowerLimit(p.power_cap_t2)));
  return config;
}

LadderPolicyConfig PolcaLadderConfig(const PolicyParams& params) {
  LadderPolicyConfig config = Base("polca-ladder", params);
  const PolicyParams& p = params;
  const std::pair<double, core::Megahertz> lp_rungs[] = {{p.ladder_t1, p.ladder_lp1_clock},
                                                         {p.ladder_t2, p.ladder_lp2_clock},
                                                         {p.ladder_t3, p.ladder_lp3_clock},
                                                         {p.ladder_t4, p.ladder_lp4_clock}};
  int i = 1;
  for (const auto& [threshold, clock] : lp_rungs) {
    Rung rung =
        MakeRung("lp" + std::to_string(i), "L" + std::to_string(i), threshold, p, Clock(clock), {});
    rung.predictive = true;
    config.rungs.push_back(std::move(rung));
    ++i;
  }
  Rung hp = MakeRung("hp", "HP", p.ladder_hp_threshold, p, Clock(p.ladder_lp4_clock),
                     Clock(p.hp_t2_clock));
  hp.dwell = p.hp_escalation_delay;
  config.rungs.push_back(std::move(hp));
  config.predict_horizon = p.ladder_predict_horizon;
  return config;
}

std::unique_ptr<RowPolicy> MakeNonePolicy(const PolicyParams& params) {
  return std::make_unique<LadderPolicy>(NoneConfig(params));
}
std::unique_ptr<RowPolicy> MakeBrakeOnlyPolicy(const PolicyParams& params) {
  return std::make_unique<LadderPolicy>(BrakeOnlyConfig(params));
}
std::unique_ptr<RowPolicy> MakePolcaPolicy(const PolicyParams& params) {
  return std::make_unique<LadderPolicy>(PolcaConfig(params));
}
std::unique_ptr<RowPolicy> MakeUniformPolicy(const PolicyParams& params) {
  return std::make_unique<LadderPolicy>(UniformConfig(params));
}
std::unique_ptr<RowPolicy> MakePowerCapPolicy(const PolicyParams& params) {
  return std::make_unique<LadderPolicy>(PowerCapConfig(params));
}
std::unique_ptr<RowPolicy> MakePolcaLadderPolicy(const PolicyParams& params) {
  return std::make_unique<LadderPolicy>(PolcaLadderConfig(params));
}
std::unique_ptr<RowPolicy> MakeMixAwarePolicy(const PolicyParams& params) {
  return std::make_unique<MixAwarePolicy>(params);
}

}  // namespace headroom::policy
