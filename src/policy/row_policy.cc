#include "policy/row_policy.h"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/parse.h"

namespace headroom::policy {

std::string_view PriorityName(ServerPriority priority) {
  switch (priority) {
    case ServerPriority::kHigh:
      return "hp";
    case ServerPriority::kLow:
      return "lp";
  }
  return "lp";
}

namespace {

template <class T>
std::optional<T> Lower(const std::optional<T>& a, const std::optional<T>& b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

}  // namespace

ServerTargets Tightest(const ServerTargets& a, const ServerTargets& b) {
  return {.sm_clock_cap = Lower(a.sm_clock_cap, b.sm_clock_cap),
          .power_limit = Lower(a.power_limit, b.power_limit),
          .brake = a.brake || b.brake};
}

core::Result<ServerPriority> ParsePriority(std::string_view text) {
  const std::string lower = core::ToLower(core::Trim(text));
  if (lower == "hp" || lower == "high") return ServerPriority::kHigh;
  if (lower == "lp" || lower == "low") return ServerPriority::kLow;
  return core::Fail(core::Error::InvalidArgument(
      fmt::format("'{}' is not a server priority (expected hp or lp)", text)));
}

void NoteStateChange(Decision* decision, core::Duration at, const std::string& before,
                     const std::vector<std::string>& reasons) {
  if (decision->state == before) return;
  decision->events.push_back(Event{.at = at,
                                   .from = before,
                                   .to = decision->state,
                                   .reason = fmt::format("{}", fmt::join(reasons, "; "))});
}

}  // namespace headroom::policy
