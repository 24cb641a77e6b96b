// PowerLimiter: the GPU firmware's power-limit loop, as a pure state machine. It is reactive:
// the clock ceiling follows, with a first-order lag, the highest clock at which the present work
// fits under the limit, so a burst shorter than the lag passes through above the limit.
// (A clock lock, by contrast, applies at once.) Thread-compatible.
#ifndef HEADROOM_MODEL_POWER_LIMITER_H_
#define HEADROOM_MODEL_POWER_LIMITER_H_

#include "core/time.h"
#include "core/units.h"
#include "model/gpu_spec.h"

namespace headroom::model {

class PowerLimiter {
 public:
  // Starts unthrottled at `f_max`.
  PowerLimiter(LimiterTraits traits, core::Megahertz f_max);

  // Advances the loop by dt toward `target`, the highest clock that fits the limit now.
  // Returns the new ceiling.
  core::Megahertz Step(core::Megahertz target, core::Duration dt);

  core::Megahertz ceiling() const { return ceiling_; }

 private:
  LimiterTraits traits_;
  core::Megahertz ceiling_;
};

}  // namespace headroom::model

#endif  // HEADROOM_MODEL_POWER_LIMITER_H_
