#include "policy/burst_reserve.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace headroom::policy {

BurstReserve::BurstReserve(const BurstReserveParams& params)
    : params_(params), reserve_(params.floor) {
  HEADROOM_CHECK(params.level_window > core::Duration::zero()) << "level window must be > 0";
  HEADROOM_CHECK(params.horizon >= core::Duration::zero()) << "horizon must be >= 0";
  HEADROOM_CHECK(params.memory > core::Duration::zero()) << "memory must be > 0";
  HEADROOM_CHECK(params.floor >= 0) << "floor must be >= 0";
}

void BurstReserve::Update(double p, core::Duration now) {
  if (!last_) {
    level_ = fast_ = p;
  } else {
    HEADROOM_CHECK(now >= *last_) << "time ran backwards";
    const double dt = core::ToSeconds(now - *last_);
    const double window_s = core::ToSeconds(params_.level_window);
    level_ += (p - level_) * -std::expm1(-dt / window_s);
    fast_ += (p - fast_) * -std::expm1(-4 * dt / window_s);
    reserve_ = params_.floor +
               (reserve_ - params_.floor) * std::exp(-dt / core::ToSeconds(params_.memory));
  }
  last_ = now;
  while (!lows_.empty() && lows_.back().second >= level_) lows_.pop_back();
  lows_.emplace_back(now, level_);
  while (now - lows_.front().first > params_.horizon) lows_.pop_front();
  reserve_ = std::max(reserve_, p - lows_.front().second);
}

double BurstReserve::rise() const {
  return lows_.empty() ? 0 : std::max(0.0, fast_ - lows_.front().second);
}

}  // namespace headroom::policy
