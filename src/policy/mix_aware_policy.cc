#include "policy/mix_aware_policy.h"

#include <algorithm>
#include <numeric>

#include <fmt/format.h>

#include "core/check.h"

namespace headroom::policy {
namespace {

// The states (names unique within policy/'s unity build).
const std::string kMixNormal = "normal";
const std::string kMixLp = "lp";
const std::string kMixBurst = "burst";
const std::string kMixHp = "hp";
const std::string kMixBrake = "brake";

// A server with requests waiting ranks after every server without: its cost is at least this.
constexpr double kBacklogCost = 2;

bool IsLp(const ServerObservation& s) { return s.priority == ServerPriority::kLow; }

}  // namespace

MixAwarePolicy::MixAwarePolicy(const PolicyParams& params)
    : params_(params),
      brake_(BrakeParams{.threshold = params.brake_threshold,
                         .release = params.brake_release,
                         .hold = params.brake_hold}),
      predictor_(params.ladder_trend_window, params.mix_predict_horizon),
      reserve_(BurstReserveParams{.level_window = params.ladder_trend_window,
                                  .horizon = params.mix_predict_horizon,
                                  .memory = params.mix_reserve_memory,
                                  .floor = params.mix_reserve_floor}) {}

std::vector<std::string> MixAwarePolicy::states() const {
  return {kMixNormal, kMixLp, kMixBurst, kMixHp, kMixBrake};
}

std::string MixAwarePolicy::State(bool braked) const {
  if (braked) return kMixBrake;
  if (hp_capped_) return kMixHp;
  if (deep_since_) return kMixBurst;
  const bool any =
      std::any_of(servers_.begin(), servers_.end(), [](const ServerState& s) { return s.capped; });
  return any ? kMixLp : kMixNormal;
}

double MixAwarePolicy::Cost(const ServerObservation& server) const {
  double cost;
  if (server.serving && server.serving->age <= params_.mix_signal_stale) {
    cost = std::clamp(server.serving->prefill_share, 0.0, 1.0);
    if (server.serving->waiting > 0) cost += kBacklogCost;
  } else {
    // The GPUs alone: a compute-bound (prefilling) server draws near what its GPUs can draw.
    cost = server.gpu_max.value() > 0
               ? std::clamp(server.gpu_power.value() / server.gpu_max.value(), 0.0, 1.0)
               : 1.0;
  }
  return cost;
}

bool MixAwarePolicy::InDelay(const ServerState& s, core::Duration now) const {
  return s.changed_at && now - *s.changed_at < params_.mix_predict_horizon;
}

double MixAwarePolicy::PendingWatts(core::Duration now) const {
  double w = 0;
  for (const ServerState& s : servers_) {
    if (InDelay(s, now)) w += s.moved_w;
  }
  return w;
}

double MixAwarePolicy::ExcessWatts(double predicted, double budget_w, double pending_w) const {
  return std::max((predicted - params_.mix_target) * budget_w,
                  ReserveShortfall() * brake_budget_w_) +
         pending_w;
}

void MixAwarePolicy::CapCheapest(const Observation& obs, double excess_w) {
  order_.clear();
  for (size_t i = 0; i < obs.servers.size(); ++i) {
    if (IsLp(obs.servers[i]) && !servers_[i].capped) order_.push_back(i);
  }
  std::stable_sort(order_.begin(), order_.end(),
                   [&](size_t a, size_t b) { return Cost(obs.servers[a]) < Cost(obs.servers[b]); });
  for (size_t i : order_) {
    if (excess_w <= 0) break;
    const double cut = obs.servers[i].gpu_power.value() * params_.mix_cap_saving;
    servers_[i] = {.capped = true, .changed_at = obs.now, .moved_w = -cut};
    excess_w -= cut;
  }
}

void MixAwarePolicy::LiftCostliest(const Observation& obs, double room_w) {
  order_.clear();
  for (size_t i = 0; i < obs.servers.size(); ++i) {
    const ServerState& s = servers_[i];
    if (s.capped && !InDelay(s, obs.now)) order_.push_back(i);
  }
  std::stable_sort(order_.begin(), order_.end(),
                   [&](size_t a, size_t b) { return Cost(obs.servers[a]) > Cost(obs.servers[b]); });
  for (size_t i : order_) {
    const double back = obs.servers[i].gpu_power.value() * params_.mix_lift_return;
    if (back > room_w) break;
    servers_[i] = {.capped = false, .changed_at = obs.now, .moved_w = back};
    room_w -= back;
  }
}

bool MixAwarePolicy::AllLpCapped(const Observation& obs) const {
  for (size_t i = 0; i < obs.servers.size(); ++i) {
    if (IsLp(obs.servers[i]) && !servers_[i].capped) return false;
  }
  return true;
}

void MixAwarePolicy::UpdateBurst(const Observation& obs, double excess_w, bool may_lift) {
  const bool burst = reserve_.rise() > params_.mix_burst_rise;
  if (!deep_since_) {
    if (burst && excess_w > 0 && AllLpCapped(obs)) deep_since_ = obs.now;
  } else if (!burst && may_lift && obs.now - *deep_since_ >= params_.mix_predict_horizon) {
    deep_since_.reset();
  }
}

core::Megahertz MixAwarePolicy::LpClock() const {
  return deep_since_ ? params_.mix_burst_clock : params_.mix_lp_clock;
}

double MixAwarePolicy::ReserveShortfall() const {
  return (reserve_.level() + reserve_.reserve()) * (provisioned_w_ / brake_budget_w_) -
         params_.brake_threshold;
}

bool MixAwarePolicy::UpdateHp(const Observation& obs, double p, bool may_lift) {
  if (!hp_capped_) {
    // POLCA's escalation, and also where every LP cap still leaves too little room for a burst.
    if (AllLpCapped(obs) && (p > params_.t2 || ReserveShortfall() > 0)) {
      if (!above_t2_since_) above_t2_since_ = obs.now;
      if (obs.now - *above_t2_since_ >= params_.hp_escalation_delay) hp_capped_ = true;
    } else {
      above_t2_since_.reset();
    }
    return hp_capped_;
  }
  if (may_lift && p < params_.t2 - params_.hysteresis &&
      ReserveShortfall() < -params_.mix_hysteresis) {
    hp_capped_ = false;
    above_t2_since_.reset();
  }
  return hp_capped_;
}

void MixAwarePolicy::Step(const Observation& obs, Decision* out) {
  HEADROOM_CHECK(obs.budget > core::Watts(0)) << "mix-aware: row budget must be > 0";
  HEADROOM_CHECK(!last_now_ || obs.now >= *last_now_) << "mix-aware: time ran backwards";
  last_now_ = obs.now;
  if (servers_.size() != obs.servers.size()) servers_.assign(obs.servers.size(), {});

  const double p = obs.Fraction();
  const bool fresh = obs.telemetry_age <= params_.stale_after;
  // The trend and the bursts are learnt on the provisioned scale, so that a lowered budget is
  // neither a rise nor a burst to remember.
  const double provisioned_p = obs.ProvisionedFraction();
  const double predicted =
      predictor_.Update(provisioned_p, obs.now) * (obs.Provisioned() / obs.budget);
  if (fresh) reserve_.Update(provisioned_p, obs.now);
  provisioned_w_ = obs.Provisioned().value();
  brake_budget_w_ = (obs.brake_budget.value() > 0 ? obs.brake_budget : obs.budget).value();
  const std::string before = State(brake_.on());

  std::vector<std::string> reasons;
  if (auto reason = brake_.Step(obs.BrakeFraction(), obs.now, fresh)) {
    reasons.push_back(std::move(*reason));
  }
  const bool braked = brake_.on();
  const bool settling =
      brake_.released_at() && obs.now - *brake_.released_at() < params_.brake_settle;
  const bool may_lift = fresh && !braked && !settling;

  const double budget_w = obs.budget.value();
  const double excess_w = ExcessWatts(predicted, budget_w, PendingWatts(obs.now));
  if (excess_w > 0) {
    CapCheapest(obs, excess_w);
  } else if (may_lift && !hp_capped_ && !deep_since_) {
    LiftCostliest(obs, -excess_w - params_.mix_hysteresis * budget_w);
  }
  UpdateBurst(obs, excess_w, may_lift);
  const bool hp = UpdateHp(obs, p, may_lift);

  Decision& decision = *out;
  decision.fraction = p;
  decision.state = State(braked);
  decision.events.clear();
  decision.targets.resize(obs.servers.size());
  for (size_t i = 0; i < obs.servers.size(); ++i) {
    ServerTargets t;
    if (IsLp(obs.servers[i])) {
      if (servers_[i].capped) t.sm_clock_cap = LpClock();
    } else if (hp) {
      t.sm_clock_cap = params_.hp_t2_clock;
    }
    t.brake = braked;
    decision.targets[i] = t;
  }
  if (decision.state != before) {
    const auto capped = std::count_if(servers_.begin(), servers_.end(),
                                      [](const ServerState& s) { return s.capped; });
    reasons.push_back(
        fmt::format("p {:.3f}, projected {:.3f} against mix_target {:.2f}, level {:.3f} with "
                    "reserve {:.3f}: {} LP server{} capped to {:.0f} MHz{}",
                    p, predicted, params_.mix_target, reserve_.level(), reserve_.reserve(), capped,
                    capped == 1 ? "" : "s", LpClock().value(),
                    hp ? fmt::format(", HP to {:.0f} MHz (p > t2 {:.2f} for {:.0f} s)",
                                     params_.hp_t2_clock.value(), params_.t2,
                                     core::ToSeconds(params_.hp_escalation_delay))
                       : ""));
  }
  NoteStateChange(&decision, obs.now, before, reasons);
}

}  // namespace headroom::policy
