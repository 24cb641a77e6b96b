#include "policy/rise_predictor.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace headroom::policy {

RisePredictor::RisePredictor(core::Duration window, core::Duration horizon)
    : slow_tau_s_(core::ToSeconds(window)),
      fast_tau_s_(slow_tau_s_ / 4),
      horizon_s_(core::ToSeconds(horizon)) {
  HEADROOM_CHECK(slow_tau_s_ > 0) << "trend window must be > 0";
  HEADROOM_CHECK(horizon_s_ >= 0) << "prediction horizon must be >= 0";
}

double RisePredictor::Update(double p, core::Duration now) {
  if (!last_) {
    fast_ = slow_ = p;
  } else {
    const double dt = core::ToSeconds(now - *last_);
    HEADROOM_CHECK(dt >= 0) << "time ran backwards";
    fast_ += (p - fast_) * (1 - std::exp(-dt / fast_tau_s_));
    slow_ += (p - slow_) * (1 - std::exp(-dt / slow_tau_s_));
  }
  last_ = now;
  return p + std::max(0.0, slope_per_s()) * horizon_s_;
}

double RisePredictor::slope_per_s() const {
  // On a ramp of slope s an exponential average lags by s * tau.
  return (fast_ - slow_) / (slow_tau_s_ - fast_tau_s_);
}

}  // namespace headroom::policy
