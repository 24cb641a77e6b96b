#include "policy/row_policy.h"

#include <fmt/format.h>

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

core::Result<ServerPriority> ParsePriority(std::string_view text) {
  const std::string lower = core::ToLower(core::Trim(text));
  if (lower == "hp" || lower == "high") return ServerPriority::kHigh;
  if (lower == "lp" || lower == "low") return ServerPriority::kLow;
  return core::Fail(core::Error::InvalidArgument(
      fmt::format("'{}' is not a server priority (expected hp or lp)", text)));
}

}  // namespace headroom::policy
