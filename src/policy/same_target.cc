#include "policy/same_target.h"

#include <cmath>
#include <optional>

#include "core/check.h"

namespace headroom::policy {
namespace {

// Drivers keep power limits in milliwatts and agents report watts: half a watt is the coarsest
// rounding between what was asked and what is read back.
constexpr double kPowerLimitToleranceW = 0.5;

}  // namespace

bool SameClock(core::Megahertz a, core::Megahertz b, const model::GpuSpec& gpu) {
  // Equal clocks snap alike: the control step compares every server's targets every second, and
  // almost all of them are unchanged.
  if (a == b) return true;
  HEADROOM_CHECK(gpu.sm_clock_step.value() > 0) << gpu.name << " has no SM clock grid";
  return gpu.SnapClock(a) == gpu.SnapClock(b);
}

bool SamePowerLimit(core::Watts a, core::Watts b) {
  return std::abs(a.value() - b.value()) <= kPowerLimitToleranceW;
}

bool SameTargetsOnGrid(const ServerTargets& a, const ServerTargets& b, const model::GpuSpec& gpu) {
  if (a.brake != b.brake || a.sm_clock_cap.has_value() != b.sm_clock_cap.has_value() ||
      a.power_limit.has_value() != b.power_limit.has_value()) {
    return false;
  }
  return (!a.sm_clock_cap || SameClock(*a.sm_clock_cap, *b.sm_clock_cap, gpu)) &&
         (!a.power_limit || SamePowerLimit(*a.power_limit, *b.power_limit));
}

}  // namespace headroom::policy
