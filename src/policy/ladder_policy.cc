#include "policy/ladder_policy.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "core/check.h"

namespace headroom::policy {
namespace {

const std::string kBrake = "brake";

bool AnyPredictive(const std::vector<Rung>& rungs) {
  return std::any_of(rungs.begin(), rungs.end(), [](const Rung& r) { return r.predictive; });
}

}  // namespace

LadderPolicy::LadderPolicy(LadderPolicyConfig config)
    : config_(std::move(config)), ladder_(config_.rungs) {
  if (config_.brake) brake_.emplace(*config_.brake);
  if (AnyPredictive(config_.rungs) && config_.predict_horizon > core::Duration::zero()) {
    predictor_.emplace(config_.trend_window, config_.predict_horizon);
  }
}

std::vector<std::string> LadderPolicy::states() const {
  std::vector<std::string> names = ladder_.states();
  if (brake_) names.push_back(kBrake);
  return names;
}

const std::string& LadderPolicy::State() const {
  return brake_ && brake_->on() ? kBrake : ladder_.state();
}

bool LadderPolicy::Settling(core::Duration now) const {
  if (!brake_ || !brake_->released_at()) return false;
  return now - *brake_->released_at() < config_.brake_settle;
}

double LadderPolicy::QuietBelow() const {
  if (predictor_ || ladder_.level() != 0 || (brake_ && brake_->on())) return 0;
  double bound = std::numeric_limits<double>::infinity();
  // A rung is climbed, and the brake engaged, only above its threshold (CappingLadder::Step,
  // BrakeGuard::Step); the first rung is the only one climbable from the normal state.
  if (!config_.rungs.empty()) bound = config_.rungs.front().enter;
  if (config_.brake) bound = std::min(bound, config_.brake->threshold);
  return bound;
}

void LadderPolicy::Step(const Observation& obs, Decision* out) {
  HEADROOM_CHECK(obs.budget > core::Watts(0)) << config_.name << ": row budget must be > 0";
  HEADROOM_CHECK(!last_now_ || obs.now >= *last_now_) << config_.name << ": time ran backwards";
  last_now_ = obs.now;

  const double p = obs.Fraction();
  const bool fresh = obs.telemetry_age <= config_.stale_after;
  // The trend is learnt on the provisioned scale, so that a lowered budget is not a rise.
  const double to_budget = obs.Provisioned() / obs.budget;
  const double predicted =
      predictor_ ? predictor_->Update(obs.ProvisionedFraction(), obs.now) * to_budget : p;
  before_ = State();

  reasons_.clear();
  if (brake_) {
    if (auto reason = brake_->Step(obs.BrakeFraction(), obs.now, fresh)) {
      reasons_.push_back(std::move(*reason));
    }
  }
  const bool braked = brake_ && brake_->on();
  const bool may_lift = fresh && !braked && !Settling(obs.now);
  if (auto move = ladder_.Step(p, predicted, obs.now, may_lift)) {
    reasons_.push_back(std::move(move->reason));
  }

  Decision& decision = *out;
  decision.fraction = p;
  decision.state = State();
  decision.events.clear();
  // Every server of a class gets its rung's targets: two to make, one per server to copy.
  ServerTargets hp = ladder_.Targets(ServerPriority::kHigh);
  ServerTargets lp = ladder_.Targets(ServerPriority::kLow);
  hp.brake = braked;
  lp.brake = braked;
  decision.targets.resize(obs.servers.size());
  for (size_t i = 0; i < obs.servers.size(); ++i) {
    decision.targets[i] = obs.servers[i].priority == ServerPriority::kHigh ? hp : lp;
  }
  NoteStateChange(&decision, obs.now, before_, reasons_);
}

}  // namespace headroom::policy
