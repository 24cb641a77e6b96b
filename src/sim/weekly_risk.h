// The chance of a power event (a brake, or time over budget) in a week, bounded from the weeks a
// plan simulated: the exact one-sided binomial (Clopper-Pearson) upper bound, and how many clean
// weeks a count needs before its bound can meet a target. Pure.
#ifndef HEADROOM_SIM_WEEKLY_RISK_H_
#define HEADROOM_SIM_WEEKLY_RISK_H_

#include "core/result.h"

namespace headroom::sim {

// The largest weekly chance of a power event that `events` in `weeks` independent weeks leave
// plausible at `confidence`: the p at which seeing `events` or fewer has probability
// 1 - confidence. 1 when events == weeks. REQUIRES: 0 <= events <= weeks, 0 < confidence < 1.
double WeeklyRiskUpperBound(int events, int weeks, double confidence);

// The smallest weekly chance that `events` in `weeks` leave plausible at `confidence`: the p at
// which seeing `events` or more has probability 1 - confidence. 0 when events == 0.
// REQUIRES: as WeeklyRiskUpperBound.
double WeeklyRiskLowerBound(int events, int weeks, double confidence);

// The fewest weeks, all clean, whose bound is at or below `max_risk` at `confidence`
// (59 for 5% at 95%, 299 for 1%). REQUIRES: ValidateRiskTarget passed.
int CleanWeeksNeeded(double max_risk, double confidence);

// kInvalidArgument naming the key for a risk target outside (0, 1) or a confidence outside
// (0.5, 1).
[[nodiscard]] core::Status ValidateRiskTarget(double max_risk, double confidence);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_WEEKLY_RISK_H_
