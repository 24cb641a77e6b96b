// RisePredictor: projects p (row power / budget) a fixed horizon ahead along its recent rise, so
// that a policy can order slow out-of-band caps before the rise crosses a threshold. The slope
// is the gap between a fast and a slow exponential average of p divided by the difference of
// their lags (exact for a linear ramp, and insensitive to sub-second prefill noise).
// Not thread-safe (one controller drives one instance).
#ifndef HEADROOM_POLICY_RISE_PREDICTOR_H_
#define HEADROOM_POLICY_RISE_PREDICTOR_H_

#include <optional>

#include "core/time.h"

namespace headroom::policy {

// Invariants: the prediction is never below the latest p; a falling p predicts itself.
class RisePredictor {
 public:
  // `window`: the slow average's time constant (the fast one's is a quarter of it).
  // `horizon`: how far ahead to project; zero turns prediction off.
  // REQUIRES: window > 0, horizon >= 0.
  RisePredictor(core::Duration window, core::Duration horizon);

  // Feeds one reading and returns p projected `horizon` ahead (>= p).
  // REQUIRES: `now` never decreases between calls.
  double Update(double p, core::Duration now);

  // The estimated rate of rise in p per second (may be negative); 0 before two readings.
  double slope_per_s() const;

 private:
  double slow_tau_s_;
  double fast_tau_s_;
  double horizon_s_;
  std::optional<core::Duration> last_;
  double fast_ = 0;
  double slow_ = 0;
};

}  // namespace headroom::policy

#endif  // HEADROOM_POLICY_RISE_PREDICTOR_H_
