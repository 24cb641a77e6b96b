#include "model/power_limiter.h"

#include <cmath>

namespace headroom::model {

PowerLimiter::PowerLimiter(LimiterTraits traits, core::Megahertz f_max)
    : traits_(traits), ceiling_(f_max) {}

core::Megahertz PowerLimiter::Step(core::Megahertz target, core::Duration dt) {
  const core::Duration tau = target < ceiling_ ? traits_.tau_down : traits_.tau_up;
  const double alpha =
      tau.count() <= 0 ? 1.0 : 1.0 - std::exp(-core::ToSeconds(dt) / core::ToSeconds(tau));
  ceiling_ = ceiling_ + (target - ceiling_) * alpha;
  return ceiling_;
}

}  // namespace headroom::model
