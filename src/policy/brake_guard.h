// BrakeGuard: the power-brake failsafe as a state machine. The brake engages on every server of
// the row when p exceeds a threshold and releases once p has fallen below a lower one and the
// brake has been held a minimum time. Not thread-safe (one controller drives one instance).
#ifndef HEADROOM_POLICY_BRAKE_GUARD_H_
#define HEADROOM_POLICY_BRAKE_GUARD_H_

#include <optional>
#include <string>

#include "core/time.h"

namespace headroom::policy {

struct BrakeParams {
  double threshold = 1.0;  // engage when p > threshold
  double release = 0.95;   // release when p < release...
  core::Duration hold{0};  // ...and the brake has been on at least this long
};

class BrakeGuard {
 public:
  // REQUIRES: params.release < params.threshold.
  explicit BrakeGuard(BrakeParams params);

  // Engages or releases; returns the reason when it did either. It never releases unless
  // `may_release` (e.g. the reading is fresh). REQUIRES: `now` never decreases between calls.
  std::optional<std::string> Step(double p, core::Duration now, bool may_release);

  bool on() const { return on_; }
  // When the brake last released; nullopt if it never has.
  std::optional<core::Duration> released_at() const { return released_at_; }

 private:
  BrakeParams params_;
  bool on_ = false;
  core::Duration engaged_at_{0};
  std::optional<core::Duration> released_at_;
};

}  // namespace headroom::policy

#endif  // HEADROOM_POLICY_BRAKE_GUARD_H_
