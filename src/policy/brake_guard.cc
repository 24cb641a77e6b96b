#include "policy/brake_guard.h"

#include <fmt/format.h>

#include "core/check.h"
#include "core/parse.h"

namespace headroom::policy {

BrakeGuard::BrakeGuard(BrakeParams params) : params_(params) {
  HEADROOM_CHECK(params_.release < params_.threshold)
      << "brake release " << params_.release << " >= threshold " << params_.threshold;
}

std::optional<std::string> BrakeGuard::Step(double p, core::Duration now, bool may_release) {
  if (!on_) {
    if (!(p > params_.threshold)) return std::nullopt;
    on_ = true;
    engaged_at_ = now;
    return fmt::format("p={:.3f} > brake={:g}", p, params_.threshold);
  }
  const core::Duration held = now - engaged_at_;
  if (!may_release || !(p < params_.release) || held < params_.hold) return std::nullopt;
  on_ = false;
  released_at_ = now;
  return fmt::format("p={:.3f} < release={:g} after {} braked", p, params_.release,
                     core::FormatDuration(held));
}

}  // namespace headroom::policy
