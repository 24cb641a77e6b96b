// SameTargets: the one rule by which the row controller (policy::RowController, in the daemon and
// the simulator alike) and the node agent (service::Agent) tell whether two settings are the
// same on a GPU. A GPU holds only clocks of its own grid (model::GpuSpec::SnapClock: the nearest
// supported clock, anchored at the maximum), so two SM clocks are the same when they land on the
// same grid clock, whatever their distance; power limits are the same within what agents read
// back. Pure functions of their arguments; thread-safe.
#ifndef HEADROOM_POLICY_SAME_TARGET_H_
#define HEADROOM_POLICY_SAME_TARGET_H_

#include "core/units.h"
#include "model/gpu_spec.h"
#include "policy/row_policy.h"

namespace headroom::policy {

// Whether `a` and `b` land on the same clock of `gpu`'s grid (what an agent locks for either).
// REQUIRES: gpu.sm_clock_step > 0 (a GPU type without a grid would take every clock as one).
bool SameClock(core::Megahertz a, core::Megahertz b, const model::GpuSpec& gpu);

// Whether two power limits are the same as agents read them back (drivers keep milliwatts;
// agents report watts).
bool SamePowerLimit(core::Watts a, core::Watts b);

// Whether `a` and `b` ask the same of the GPUs of type `gpu`: the same brake, the same caps
// present, SM clock caps the same clock of the grid (SameClock), power limits the same as read
// back (SamePowerLimit).
// REQUIRES: as SameClock.
bool SameTargetsOnGrid(const ServerTargets& a, const ServerTargets& b, const model::GpuSpec& gpu);

// SameTargetsOnGrid, with equal targets answered inline: the row controller compares every
// server's targets a few times every control step, and almost all of them are equal.
inline bool SameTargets(const ServerTargets& a, const ServerTargets& b, const model::GpuSpec& gpu) {
  return a == b || SameTargetsOnGrid(a, b, gpu);
}

}  // namespace headroom::policy

#endif  // HEADROOM_POLICY_SAME_TARGET_H_
