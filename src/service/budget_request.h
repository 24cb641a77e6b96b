// BudgetRequest: the body of the controller's `PUT /v1/budget`, a lower row budget asked for a
// while (a utility's demand-response call, an operator shedding ahead of maintenance). Parsed
// strictly (ParseBudgetRequest: malformed JSON, wrong types, unknown or missing keys are
// kInvalidArgument, HTTP 400), then checked against the row and the grid section's bounds
// (ValidateBudgetRequest: kOutOfRange, HTTP 422), both before anything changes. Pure functions.
//
// {"budget_w": 195000, "duration": "3h", "reason": "utility DR event 4411",
//  "effective_at": "2026-12-07T17:00:00Z", "comply_within": "60s"}
// effective_at (RFC 3339, UTC) defaults to now and comply_within to the grid section's.
#ifndef HEADROOM_SERVICE_BUDGET_REQUEST_H_
#define HEADROOM_SERVICE_BUDGET_REQUEST_H_

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "core/time.h"
#include "core/units.h"

namespace headroom::service {

using WallTime = std::chrono::system_clock::time_point;

struct BudgetRequest {
  core::Watts budget{0};
  std::optional<WallTime> effective_at = {};
  core::Duration duration{0};
  std::optional<core::Duration> comply_within = {};
  std::string reason = {};
};

// What a grid signal may ask (the controller's `grid:` section).
struct GridLimits {
  core::Duration comply_within{std::chrono::seconds(60)};  // for a request that gives none
  // A budget signal may change no faster than this: a flapping or hostile signal must not make
  // the row's caps oscillate.
  core::Duration min_interval{std::chrono::seconds(60)};
  core::Duration max_duration{std::chrono::hours(24)};
  // How far in the past effective_at may lie (clocks of the sender and the controller differ).
  core::Duration clock_skew{std::chrono::seconds(5)};
};

[[nodiscard]] core::Result<BudgetRequest> ParseBudgetRequest(std::string_view body);

// REQUIRES: request came from ParseBudgetRequest. `last_change`: when the budget signal last
// changed the budget (an accepted PUT or DELETE), if ever.
[[nodiscard]] core::Status ValidateBudgetRequest(const BudgetRequest& request,
                                                 const GridLimits& limits, core::Watts provisioned,
                                                 WallTime now, std::optional<WallTime> last_change);

// "2026-12-07T17:00:00Z" (UTC, whole or fractional seconds); kInvalidArgument otherwise.
[[nodiscard]] core::Result<WallTime> ParseUtcTime(std::string_view text);
std::string FormatUtcTime(WallTime t);

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_BUDGET_REQUEST_H_
