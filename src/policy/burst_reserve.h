// BurstReserve: how far above its level the row's power has risen within one actuation delay,
// remembered for hours, so that a policy keeps that much room under the brake before the next
// burst comes. Not thread-safe (one controller drives one instance).
//
// Why: a cap ordered out of band acts one actuation delay (40 s) after the order, so the rise a
// burst makes within that delay must already fit under the brake when it starts. A projection
// along the present slope sees a burst only once it is under way; the row's own history says
// how large its bursts are (traffic tripling in the stress case) and how noisy its one-second
// readings are. Both are in one figure: p minus the lowest level of the last delay.
//
// level: an exponential average of p (time constant `level_window`), which filters the
// readings' prefill noise. excursion: p minus the lowest level over the last `horizon`. reserve:
// the largest excursion seen, decaying back to `floor` with time constant `memory`. rise: the
// same for a fast average of p (a quarter of `level_window`), the burst under way without the
// one-second noise.
#ifndef HEADROOM_POLICY_BURST_RESERVE_H_
#define HEADROOM_POLICY_BURST_RESERVE_H_

#include <deque>
#include <optional>
#include <utility>

#include "core/time.h"

namespace headroom::policy {

struct BurstReserveParams {
  core::Duration level_window{std::chrono::seconds(20)};
  core::Duration horizon{std::chrono::seconds(40)};
  core::Duration memory{std::chrono::hours(4)};
  double floor = 0;
};

class BurstReserve {
 public:
  // REQUIRES: level_window > 0, horizon >= 0, memory > 0, floor >= 0.
  explicit BurstReserve(const BurstReserveParams& params);

  // Feeds one fresh reading. REQUIRES: `now` never decreases between calls.
  void Update(double p, core::Duration now);

  double level() const { return level_; }
  // At least `floor`; `floor` before the first reading.
  double reserve() const { return reserve_; }
  // How far the fast average stands above the lowest level of the last horizon (>= 0).
  double rise() const;

 private:
  BurstReserveParams params_;
  std::optional<core::Duration> last_;
  double level_ = 0;
  double fast_ = 0;
  double reserve_;
  // (time, level) with rising levels: the front is the lowest level within the horizon.
  std::deque<std::pair<core::Duration, double>> lows_;
};

}  // namespace headroom::policy

#endif  // HEADROOM_POLICY_BURST_RESERVE_H_
