// CappingLadder: the hysteretic state machine under every capping policy. The row climbs a
// ladder of rungs as p (row power / budget) rises and steps down as it falls; each rung names the
// targets of LP and HP servers. Not thread-safe (one controller drives one instance).
#ifndef HEADROOM_POLICY_CAPPING_LADDER_H_
#define HEADROOM_POLICY_CAPPING_LADDER_H_

#include <optional>
#include <string>
#include <vector>

#include "core/time.h"
#include "policy/row_policy.h"

namespace headroom::policy {

struct Rung {
  std::string state;        // the policy's state while on this rung, e.g. "t2"
  std::string threshold;    // the threshold's name in explanations, e.g. "T2"
  double enter = 0;         // climb onto this rung when p > enter...
  core::Duration dwell{0};  // ...and the rung below has been held at least this long
  double exit = 0;          // step down off it when p < exit (enter - hysteresis)
  bool predictive = false;  // compare the predicted p, not the measured one, with enter/exit
  ServerTargets lp = {};    // what every GPU of an LP server is asked for on this rung
  ServerTargets hp = {};    // likewise for HP servers
};

// Invariants: 0 <= level() <= number of rungs; level 0 is "normal" with no targets.
class CappingLadder {
 public:
  // REQUIRES: rungs' enter thresholds do not fall, and exit <= enter on each rung.
  explicit CappingLadder(std::vector<Rung> rungs);

  // What one step decided: the climb or descent that changed the level, if any.
  struct Move {
    int from = 0;
    int to = 0;
    std::string reason;  // e.g. "p=0.912 > T2=0.89"
  };

  // Climbs as far as the rungs allow (several rungs at once unless one needs a dwell); if it
  // did not climb and `may_lift`, steps down as far as p allows. `predicted` (>= p) is used for
  // predictive rungs. REQUIRES: `now` never decreases between calls.
  std::optional<Move> Step(double p, double predicted, core::Duration now, bool may_lift);

  int level() const { return level_; }
  const std::string& state() const;
  // REQUIRES: 0 <= level <= number of rungs.
  const ServerTargets& Targets(ServerPriority priority) const;
  // "normal" then every rung's state, without repeats.
  std::vector<std::string> states() const;

 private:
  std::vector<Rung> rungs_;
  int level_ = 0;
  core::Duration since_{0};  // when the present level was entered
};

}  // namespace headroom::policy

#endif  // HEADROOM_POLICY_CAPPING_LADDER_H_
