#include "policy/policy_params.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.h"

namespace headroom::policy {
namespace {

// The GPU the defaults are written for: A100 SXM (brief §5).
constexpr double kA100MaxClockMhz = 1410;
constexpr double kA100TdpW = 400;

using Member = std::variant<double PolicyParams::*, core::Duration PolicyParams::*,
                            core::Megahertz PolicyParams::*, core::Watts PolicyParams::*>;

struct Field {
  std::string_view key;
  Member member;
};

// Keys are the member names plus the unit suffix (policy_params.h).
constexpr Field kFields[] = {
    {"t1", &PolicyParams::t1},
    {"t2", &PolicyParams::t2},
    {"hysteresis", &PolicyParams::hysteresis},
    {"brake_threshold", &PolicyParams::brake_threshold},
    {"brake_release", &PolicyParams::brake_release},
    {"brake_hold_s", &PolicyParams::brake_hold},
    {"brake_settle_s", &PolicyParams::brake_settle},
    {"stale_after_s", &PolicyParams::stale_after},
    {"lp_t1_clock_mhz", &PolicyParams::lp_t1_clock},
    {"lp_t2_clock_mhz", &PolicyParams::lp_t2_clock},
    {"hp_t2_clock_mhz", &PolicyParams::hp_t2_clock},
    {"hp_escalation_delay_s", &PolicyParams::hp_escalation_delay},
    {"power_cap_t1_w", &PolicyParams::power_cap_t1},
    {"power_cap_t2_w", &PolicyParams::power_cap_t2},
    {"ladder_t1", &PolicyParams::ladder_t1},
    {"ladder_t2", &PolicyParams::ladder_t2},
    {"ladder_t3", &PolicyParams::ladder_t3},
    {"ladder_t4", &PolicyParams::ladder_t4},
    {"ladder_lp1_clock_mhz", &PolicyParams::ladder_lp1_clock},
    {"ladder_lp2_clock_mhz", &PolicyParams::ladder_lp2_clock},
    {"ladder_lp3_clock_mhz", &PolicyParams::ladder_lp3_clock},
    {"ladder_lp4_clock_mhz", &PolicyParams::ladder_lp4_clock},
    {"ladder_hp_threshold", &PolicyParams::ladder_hp_threshold},
    {"ladder_predict_horizon_s", &PolicyParams::ladder_predict_horizon},
    {"ladder_trend_window_s", &PolicyParams::ladder_trend_window},
    {"mix_target", &PolicyParams::mix_target},
    {"mix_hysteresis", &PolicyParams::mix_hysteresis},
    {"mix_lp_clock_mhz", &PolicyParams::mix_lp_clock},
    {"mix_cap_saving", &PolicyParams::mix_cap_saving},
    {"mix_lift_return", &PolicyParams::mix_lift_return},
    {"mix_signal_stale_s", &PolicyParams::mix_signal_stale},
    {"mix_predict_horizon_s", &PolicyParams::mix_predict_horizon},
    {"mix_reserve_floor", &PolicyParams::mix_reserve_floor},
    {"mix_reserve_memory_s", &PolicyParams::mix_reserve_memory},
    {"mix_burst_rise", &PolicyParams::mix_burst_rise},
    {"mix_burst_clock_mhz", &PolicyParams::mix_burst_clock},
};

const Field* FindField(std::string_view key) {
  for (const Field& field : kFields) {
    if (field.key == key) return &field;
  }
  return nullptr;
}

core::Error UnknownKey(std::string_view key) {
  return core::Error::NotFound(
      fmt::format("unknown policy parameter '{}' (valid: {})", key, fmt::join(ParamNames(), ", ")));
}

double Get(const PolicyParams& params, const Member& member) {
  struct Getter {
    const PolicyParams& p;
    double operator()(double PolicyParams::*m) const { return p.*m; }
    double operator()(core::Duration PolicyParams::*m) const { return core::ToSeconds(p.*m); }
    double operator()(core::Megahertz PolicyParams::*m) const { return (p.*m).value(); }
    double operator()(core::Watts PolicyParams::*m) const { return (p.*m).value(); }
  };
  return std::visit(Getter{params}, member);
}

void Set(PolicyParams& params, const Member& member, double value) {
  struct Setter {
    PolicyParams& p;
    double v;
    void operator()(double PolicyParams::*m) const { p.*m = v; }
    void operator()(core::Duration PolicyParams::*m) const { p.*m = core::FromSeconds(v); }
    void operator()(core::Megahertz PolicyParams::*m) const { p.*m = core::Megahertz(v); }
    void operator()(core::Watts PolicyParams::*m) const { p.*m = core::Watts(v); }
  };
  std::visit(Setter{params, value}, member);
}

core::Status Invalid(std::string_view key, std::string message) {
  return core::Fail(core::Error::InvalidArgument(fmt::format("{}: {}", key, message)));
}

// Each check returns the first broken relation, naming the field to change.
core::Status ValidateThresholds(const PolicyParams& p) {
  if (!(p.t1 > 0)) return Invalid("t1", fmt::format("{} must be > 0", p.t1));
  if (!(p.t2 > p.t1)) return Invalid("t2", fmt::format("{} must be > t1 ({})", p.t2, p.t1));
  if (!(p.brake_threshold > p.t2)) {
    return Invalid("brake_threshold", fmt::format("{} must be > t2 ({})", p.brake_threshold, p.t2));
  }
  if (!(p.hysteresis >= 0 && p.hysteresis < p.t1)) {
    return Invalid("hysteresis", fmt::format("{} must be in [0, t1)", p.hysteresis));
  }
  if (!(p.brake_release > 0 && p.brake_release < p.brake_threshold)) {
    return Invalid("brake_release", fmt::format("{} must be in (0, brake_threshold={})",
                                                p.brake_release, p.brake_threshold));
  }
  return core::Ok();
}

core::Status ValidateDurations(const PolicyParams& p) {
  const auto zero = core::Duration::zero();
  if (p.brake_hold < zero) return Invalid("brake_hold_s", "must be >= 0");
  if (p.brake_settle < zero) return Invalid("brake_settle_s", "must be >= 0");
  if (p.stale_after <= zero) return Invalid("stale_after_s", "must be > 0");
  if (p.hp_escalation_delay < zero) return Invalid("hp_escalation_delay_s", "must be >= 0");
  if (p.ladder_predict_horizon < zero) return Invalid("ladder_predict_horizon_s", "must be >= 0");
  if (p.ladder_trend_window <= zero) return Invalid("ladder_trend_window_s", "must be > 0");
  return core::Ok();
}

core::Status ValidateCaps(const PolicyParams& p) {
  const core::Megahertz zero_mhz{0};
  if (!(p.lp_t1_clock > zero_mhz)) return Invalid("lp_t1_clock_mhz", "must be > 0");
  if (!(p.lp_t2_clock > zero_mhz && p.lp_t2_clock <= p.lp_t1_clock)) {
    return Invalid("lp_t2_clock_mhz", fmt::format("{} must be in (0, lp_t1_clock_mhz={}]",
                                                  p.lp_t2_clock.value(), p.lp_t1_clock.value()));
  }
  if (!(p.hp_t2_clock > zero_mhz)) return Invalid("hp_t2_clock_mhz", "must be > 0");
  if (!(p.power_cap_t1 > core::Watts(0))) return Invalid("power_cap_t1_w", "must be > 0");
  if (!(p.power_cap_t2 > core::Watts(0) && p.power_cap_t2 <= p.power_cap_t1)) {
    return Invalid("power_cap_t2_w", fmt::format("{} must be in (0, power_cap_t1_w={}]",
                                                 p.power_cap_t2.value(), p.power_cap_t1.value()));
  }
  return core::Ok();
}

core::Status ValidateLadder(const PolicyParams& p) {
  if (!(p.ladder_t1 > 0)) return Invalid("ladder_t1", "must be > 0");
  if (!(p.ladder_t2 > p.ladder_t1)) return Invalid("ladder_t2", "must be > ladder_t1");
  if (!(p.ladder_t3 > p.ladder_t2)) return Invalid("ladder_t3", "must be > ladder_t2");
  if (!(p.ladder_t4 > p.ladder_t3)) return Invalid("ladder_t4", "must be > ladder_t3");
  if (!(p.ladder_hp_threshold >= p.ladder_t4 && p.ladder_hp_threshold < p.brake_threshold)) {
    return Invalid("ladder_hp_threshold", fmt::format("{} must be in [ladder_t4, brake_threshold)",
                                                      p.ladder_hp_threshold));
  }
  if (!(p.hysteresis < p.ladder_t1)) {
    return Invalid("hysteresis",
                   fmt::format("{} must be < ladder_t1 ({})", p.hysteresis, p.ladder_t1));
  }
  if (!(p.ladder_lp1_clock > core::Megahertz(0))) {
    return Invalid("ladder_lp1_clock_mhz", "must be > 0");
  }
  if (!(p.ladder_lp2_clock > core::Megahertz(0) && p.ladder_lp2_clock <= p.ladder_lp1_clock)) {
    return Invalid("ladder_lp2_clock_mhz", "must be in (0, ladder_lp1_clock_mhz]");
  }
  if (!(p.ladder_lp3_clock > core::Megahertz(0) && p.ladder_lp3_clock <= p.ladder_lp2_clock)) {
    return Invalid("ladder_lp3_clock_mhz", "must be in (0, ladder_lp2_clock_mhz]");
  }
  if (!(p.ladder_lp4_clock > core::Megahertz(0) && p.ladder_lp4_clock <= p.ladder_lp3_clock)) {
    return Invalid("ladder_lp4_clock_mhz", "must be in (0, ladder_lp3_clock_mhz]");
  }
  return core::Ok();
}

core::Status ValidateMix(const PolicyParams& p) {
  if (!(p.mix_target > p.t1 && p.mix_target < p.brake_threshold)) {
    return Invalid("mix_target", fmt::format("{} must be in (t1={}, brake_threshold={})",
                                             p.mix_target, p.t1, p.brake_threshold));
  }
  if (!(p.mix_hysteresis >= 0 && p.mix_hysteresis < p.mix_target)) {
    return Invalid("mix_hysteresis",
                   fmt::format("{} must be in [0, mix_target)", p.mix_hysteresis));
  }
  if (!(p.mix_lp_clock > core::Megahertz(0))) return Invalid("mix_lp_clock_mhz", "must be > 0");
  if (!(p.mix_cap_saving > 0 && p.mix_cap_saving <= 1)) {
    return Invalid("mix_cap_saving", fmt::format("{} must be in (0, 1]", p.mix_cap_saving));
  }
  if (!(p.mix_lift_return >= p.mix_cap_saving && p.mix_lift_return <= 10)) {
    return Invalid("mix_lift_return",
                   fmt::format("{} must be in [mix_cap_saving, 10]", p.mix_lift_return));
  }
  if (p.mix_signal_stale <= core::Duration::zero()) {
    return Invalid("mix_signal_stale_s", "must be > 0");
  }
  if (p.mix_predict_horizon < core::Duration::zero()) {
    return Invalid("mix_predict_horizon_s", "must be >= 0");
  }
  if (!(p.mix_reserve_floor >= 0 && p.mix_reserve_floor < p.brake_threshold)) {
    return Invalid("mix_reserve_floor",
                   fmt::format("{} must be in [0, brake_threshold)", p.mix_reserve_floor));
  }
  if (p.mix_reserve_memory <= core::Duration::zero()) {
    return Invalid("mix_reserve_memory_s", "must be > 0");
  }
  if (!(p.mix_burst_rise > 0 && p.mix_burst_rise < 1)) {
    return Invalid("mix_burst_rise", fmt::format("{} must be in (0, 1)", p.mix_burst_rise));
  }
  if (!(p.mix_burst_clock > core::Megahertz(0) && p.mix_burst_clock <= p.mix_lp_clock)) {
    return Invalid("mix_burst_clock_mhz", "must be in (0, mix_lp_clock_mhz]");
  }
  return core::Ok();
}

core::Watts ScaleWatts(core::Watts a100_w, const model::GpuSpec& gpu) {
  double w = std::round(a100_w.value() * gpu.tdp.value() / kA100TdpW);
  if (gpu.power_limit_max.value() > 0) {
    w = std::clamp(w, gpu.power_limit_min.value(), gpu.power_limit_max.value());
  }
  return core::Watts(w);
}

}  // namespace

PolicyParams DefaultParamsFor(const model::GpuSpec& gpu) {
  HEADROOM_CHECK(gpu.sm_clock_max.value() > 0) << gpu.name << ": no max SM clock";
  HEADROOM_CHECK(gpu.tdp.value() > 0) << gpu.name << ": no TDP";
  const double clock_ratio = gpu.sm_clock_max.value() / kA100MaxClockMhz;
  const auto scale = [&](core::Megahertz a100) { return gpu.SnapClock(a100 * clock_ratio); };
  PolicyParams p;
  p.lp_t1_clock = scale(p.lp_t1_clock);
  p.lp_t2_clock = scale(p.lp_t2_clock);
  p.hp_t2_clock = scale(p.hp_t2_clock);
  p.ladder_lp1_clock = scale(p.ladder_lp1_clock);
  p.ladder_lp2_clock = scale(p.ladder_lp2_clock);
  p.ladder_lp3_clock = scale(p.ladder_lp3_clock);
  p.ladder_lp4_clock = scale(p.ladder_lp4_clock);
  p.mix_lp_clock = scale(p.mix_lp_clock);
  p.mix_burst_clock = scale(p.mix_burst_clock);
  p.power_cap_t1 = ScaleWatts(p.power_cap_t1, gpu);
  p.power_cap_t2 = ScaleWatts(p.power_cap_t2, gpu);
  return p;
}

core::Status ValidateParams(const PolicyParams& params) {
  HEADROOM_RETURN_IF_ERROR(ValidateThresholds(params));
  HEADROOM_RETURN_IF_ERROR(ValidateDurations(params));
  HEADROOM_RETURN_IF_ERROR(ValidateCaps(params));
  HEADROOM_RETURN_IF_ERROR(ValidateLadder(params));
  HEADROOM_RETURN_IF_ERROR(ValidateMix(params));
  return core::Ok();
}

core::Status ValidateParams(const PolicyParams& params, const model::GpuSpec& gpu) {
  HEADROOM_RETURN_IF_ERROR(ValidateParams(params));
  for (const Field& field : kFields) {
    if (const auto* clock = std::get_if<core::Megahertz PolicyParams::*>(&field.member)) {
      const core::Megahertz f = params.**clock;
      if (f < gpu.sm_clock_min || f > gpu.sm_clock_max) {
        return core::Fail(core::Error::OutOfRange(
            fmt::format("{}: {} MHz is outside {}'s SM clock range [{}, {}] MHz", field.key,
                        f.value(), gpu.name, gpu.sm_clock_min.value(), gpu.sm_clock_max.value())));
      }
    }
    if (const auto* watts = std::get_if<core::Watts PolicyParams::*>(&field.member)) {
      const core::Watts w = params.**watts;
      if (w < gpu.power_limit_min || w > gpu.power_limit_max) {
        return core::Fail(core::Error::OutOfRange(fmt::format(
            "{}: {} W is outside {}'s power limit range [{}, {}] W", field.key, w.value(), gpu.name,
            gpu.power_limit_min.value(), gpu.power_limit_max.value())));
      }
    }
  }
  return core::Ok();
}

std::vector<std::string> ParamNames() {
  std::vector<std::string> names;
  names.reserve(std::size(kFields));
  for (const Field& field : kFields) names.emplace_back(field.key);
  return names;
}

core::Status SetParam(PolicyParams& params, std::string_view key, double value) {
  const Field* field = FindField(key);
  if (field == nullptr) return core::Fail(UnknownKey(key));
  if (!std::isfinite(value)) {
    return core::Fail(
        core::Error::InvalidArgument(fmt::format("{}: {} is not finite", key, value)));
  }
  // A duration becomes int64 ns: 1e10 s would overflow it (undefined behaviour, and a controller
  // that then never settles). No policy time is meant to span more than a day.
  constexpr double kMaxPolicySeconds = 86'400;
  if (std::holds_alternative<core::Duration PolicyParams::*>(field->member) &&
      std::abs(value) > kMaxPolicySeconds) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{}: {} s is longer than a day ({} s)", key, value, kMaxPolicySeconds)));
  }
  Set(params, field->member, value);
  return core::Ok();
}

core::Result<double> ParamValue(const PolicyParams& params, std::string_view key) {
  const Field* field = FindField(key);
  if (field == nullptr) return core::Fail(UnknownKey(key));
  return Get(params, field->member);
}

}  // namespace headroom::policy
