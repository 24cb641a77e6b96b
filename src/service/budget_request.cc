#include "service/budget_request.h"

#include <cctype>
#include <cmath>
#include <set>

#include <fmt/chrono.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/parse.h"

namespace headroom::service {
namespace {

using nlohmann::json;

core::Error BadBudget(std::string message) {
  return core::Error::InvalidArgument(std::move(message));
}
core::Error BudgetRange(std::string message) { return core::Error::OutOfRange(std::move(message)); }

core::Result<std::string> StringField(const json& body, std::string_view key) {
  auto it = body.find(key);
  if (it == body.end()) return core::Fail(BadBudget(fmt::format("'{}' is required", key)));
  if (!it->is_string()) return core::Fail(BadBudget(fmt::format("'{}' must be a string", key)));
  return it->get<std::string>();
}

core::Result<core::Duration> DurationField(const json& body, std::string_view key) {
  HEADROOM_ASSIGN_OR_RETURN(std::string text, StringField(body, key));
  auto d = core::ParseDuration(text);
  if (!d) return core::Fail(BadBudget(fmt::format("'{}': {}", key, d.error().message())));
  return *d;
}

// Digits of `text` from `at`, exactly `n` of them.
std::optional<int> Digits(std::string_view text, std::size_t at, std::size_t n) {
  if (at + n > text.size()) return std::nullopt;
  int v = 0;
  for (std::size_t k = at; k < at + n; ++k) {
    if (!std::isdigit(static_cast<unsigned char>(text[k]))) return std::nullopt;
    v = v * 10 + (text[k] - '0');
  }
  return v;
}

}  // namespace

core::Result<WallTime> ParseUtcTime(std::string_view text) {
  // Hand-written: g++ 12's <chrono> has no std::chrono::parse, and strptime reads local
  // conventions; the form is fixed (RFC 3339 in UTC).
  const auto fail = [&] {
    return core::Fail(BadBudget(fmt::format(
        "'{}' is not a UTC time (expected RFC 3339 with Z, e.g. 2026-12-07T17:00:00Z)", text)));
  };
  const auto y = Digits(text, 0, 4), mo = Digits(text, 5, 2), d = Digits(text, 8, 2),
             h = Digits(text, 11, 2), mi = Digits(text, 14, 2), s = Digits(text, 17, 2);
  if (!y || !mo || !d || !h || !mi || !s || text.size() < 20 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't') || text[13] != ':' || text[16] != ':' || *h > 23 ||
      *mi > 59 || *s > 60) {
    return fail();
  }
  std::size_t end = 19;
  double fraction = 0;
  if (text[end] == '.') {
    std::size_t k = end + 1;
    while (k < text.size() && std::isdigit(static_cast<unsigned char>(text[k]))) ++k;
    if (k == end + 1) return fail();
    fraction = std::stod("0" + std::string(text.substr(end, k - end)));
    end = k;
  }
  if (end + 1 != text.size() || (text[end] != 'Z' && text[end] != 'z')) return fail();
  const std::chrono::year_month_day date{std::chrono::year(*y), std::chrono::month(*mo),
                                         std::chrono::day(*d)};
  if (!date.ok()) return fail();
  const auto seconds = std::chrono::sys_days(date).time_since_epoch() + std::chrono::hours(*h) +
                       std::chrono::minutes(*mi) + std::chrono::seconds(*s);
  return WallTime(
      std::chrono::duration_cast<WallTime::duration>(seconds) +
      std::chrono::duration_cast<WallTime::duration>(std::chrono::duration<double>(fraction)));
}

std::string FormatUtcTime(WallTime t) {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}", std::chrono::floor<std::chrono::seconds>(t));
}

core::Result<BudgetRequest> ParseBudgetRequest(std::string_view body) {
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return core::Fail(BadBudget("the body is not JSON"));
  if (!j.is_object()) return core::Fail(BadBudget("the body must be a JSON object"));
  static const std::set<std::string> kKnown = {"budget_w", "duration", "reason", "effective_at",
                                               "comply_within"};
  for (const auto& [key, value] : j.items()) {
    if (!kKnown.contains(key)) return core::Fail(BadBudget(fmt::format("unknown key '{}'", key)));
  }
  BudgetRequest r;
  auto watts = j.find("budget_w");
  if (watts == j.end()) return core::Fail(BadBudget("'budget_w' is required"));
  // A bool is not a number here, though nlohmann reads it as one.
  if (!watts->is_number() || watts->is_boolean()) {
    return core::Fail(BadBudget("'budget_w' must be a number"));
  }
  r.budget = core::Watts(watts->get<double>());
  HEADROOM_ASSIGN_OR_RETURN(r.duration, DurationField(j, "duration"));
  HEADROOM_ASSIGN_OR_RETURN(r.reason, StringField(j, "reason"));
  if (core::Trim(r.reason).empty() || r.reason.size() > 200) {
    return core::Fail(BadBudget("'reason' must be 1 to 200 characters"));
  }
  if (j.contains("effective_at")) {
    HEADROOM_ASSIGN_OR_RETURN(std::string at, StringField(j, "effective_at"));
    HEADROOM_ASSIGN_OR_RETURN(r.effective_at, ParseUtcTime(at));
  }
  if (j.contains("comply_within")) {
    HEADROOM_ASSIGN_OR_RETURN(r.comply_within, DurationField(j, "comply_within"));
  }
  return r;
}

core::Status ValidateBudgetRequest(const BudgetRequest& r, const GridLimits& limits,
                                   core::Watts provisioned, WallTime now,
                                   std::optional<WallTime> last_change) {
  const double w = r.budget.value();
  if (!std::isfinite(w) || w <= 0) {
    return core::Fail(
        BudgetRange(fmt::format("budget_w {} must be a positive number of watts", w)));
  }
  if (w > provisioned.value()) {
    return core::Fail(BudgetRange(fmt::format(
        "budget_w {:.0f} is above the row's provisioned {:.0f} W: a grid signal may only lower it",
        w, provisioned.value())));
  }
  if (r.effective_at && *r.effective_at + limits.clock_skew < now) {
    return core::Fail(BudgetRange(fmt::format("effective_at {} is in the past (now {})",
                                              FormatUtcTime(*r.effective_at), FormatUtcTime(now))));
  }
  if (r.duration <= core::Duration::zero() || r.duration > limits.max_duration) {
    return core::Fail(BudgetRange(fmt::format("duration {} must be positive and at most {}",
                                              core::FormatDuration(r.duration),
                                              core::FormatDuration(limits.max_duration))));
  }
  if (r.comply_within && *r.comply_within <= core::Duration::zero()) {
    return core::Fail(BudgetRange("comply_within must be positive"));
  }
  if (last_change && now - *last_change < limits.min_interval) {
    return core::Fail(BudgetRange(fmt::format(
        "the budget changed {} ago: a budget signal may change at most once every {} "
        "(grid.min_interval)",
        core::FormatDuration(std::chrono::duration_cast<std::chrono::seconds>(now - *last_change)),
        core::FormatDuration(limits.min_interval))));
  }
  return core::Ok();
}

}  // namespace headroom::service
