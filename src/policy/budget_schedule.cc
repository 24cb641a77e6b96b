#include "policy/budget_schedule.h"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/parse.h"

namespace headroom::policy {
namespace {

constexpr core::Duration kDay = std::chrono::hours(24);

// floor(a / b) for b > 0, whatever a's sign.
std::int64_t FloorDiv(core::Duration a, core::Duration b) {
  const std::int64_t q = a / b;
  return (a % b < core::Duration::zero()) ? q - 1 : q;
}

std::string Name(const BudgetWindow& w, std::size_t index) {
  return fmt::format("budget window {} ('{}')", index + 1, w.reason);
}

core::Status CheckWindow(const BudgetWindow& w, std::size_t index) {
  const auto fail = [&](std::string_view what) {
    return core::Fail(core::Error::InvalidArgument(fmt::format("{}: {}", Name(w, index), what)));
  };
  if (w.length <= core::Duration::zero()) return fail("its length must be positive");
  if (w.daily && w.length >= kDay) return fail("a daily window must be shorter than a day");
  if (w.daily && (w.start < core::Duration::zero() || w.start >= kDay)) {
    return fail("a daily window starts at a time of day, 00:00 to 23:59");
  }
  if (!w.daily && w.start < core::Duration::zero()) return fail("it starts before the timeline");
  if (!(w.shed > 0 && w.shed < 1)) {
    return fail(fmt::format("shed {:.4g}% must lie strictly between 0% and 100%", w.shed * 100));
  }
  if (w.comply_within <= core::Duration::zero()) return fail("comply_within must be positive");
  return core::Ok();
}

// Whether [a, a + a_len) meets b's occurrences (all of them for a daily b).
bool Meets(core::Duration a, core::Duration a_len, const BudgetWindow& b) {
  if (!b.daily) return a < b.start + b.length && b.start < a + a_len;
  // b's occurrences that could meet [a, a + a_len): those beginning from a - b.length on.
  for (std::int64_t d = FloorDiv(a - b.start - b.length, kDay); d * kDay + b.start < a + a_len;
       ++d) {
    const core::Duration begins = d * kDay + b.start;
    if (begins < a + a_len && a < begins + b.length) return true;
  }
  return false;
}

bool Overlap(const BudgetWindow& a, const BudgetWindow& b) {
  if (!a.daily) return Meets(a.start, a.length, b);
  if (!b.daily) return Meets(b.start, b.length, a);
  // Two daily windows meet if a's occurrence of any day meets b's: one day of a's is enough.
  return Meets(a.start, a.length, b);
}

}  // namespace

core::Result<BudgetSchedule> BudgetSchedule::Make(std::vector<BudgetWindow> windows) {
  for (std::size_t i = 0; i < windows.size(); ++i) {
    HEADROOM_RETURN_IF_ERROR(CheckWindow(windows[i], i));
    for (std::size_t j = 0; j < i; ++j) {
      if (Overlap(windows[j], windows[i])) {
        return core::Fail(core::Error::InvalidArgument(
            fmt::format("{} overlaps {}: a row has one budget at a time", Name(windows[i], i),
                        Name(windows[j], j))));
      }
    }
  }
  return BudgetSchedule(std::move(windows));
}

std::optional<BudgetOccurrence> BudgetSchedule::At(core::Duration t) const {
  for (std::size_t i = 0; i < windows_.size(); ++i) {
    const BudgetWindow& w = windows_[i];
    const core::Duration begins = w.daily ? FloorDiv(t - w.start, kDay) * kDay + w.start : w.start;
    if (begins <= t && t < begins + w.length) {
      return BudgetOccurrence{static_cast<int>(i), begins, begins + w.length};
    }
  }
  return std::nullopt;
}

std::optional<BudgetOccurrence> BudgetSchedule::Next(core::Duration t) const {
  std::optional<BudgetOccurrence> next;
  for (std::size_t i = 0; i < windows_.size(); ++i) {
    const BudgetWindow& w = windows_[i];
    core::Duration begins = w.start;
    if (w.daily) {
      begins = FloorDiv(t - w.start, kDay) * kDay + w.start;
      if (begins <= t) begins += kDay;
    } else if (begins <= t) {
      continue;
    }
    if (!next || begins < next->begins) {
      next = BudgetOccurrence{static_cast<int>(i), begins, begins + w.length};
    }
  }
  return next;
}

void BudgetCompliance::Meter(double since_s, double row_w, double period_s, double budget_w,
                             double comply_within_s, double length_s) {
  if (since_s > comply_within_s && row_w > budget_w) {
    over_after_deadline_s += period_s;
    peak_after_deadline_w = std::max(peak_after_deadline_w, row_w);
  }
  if (complied_after_s) return;
  // Under the budget for a minute: one sample under it may be the metering's noise.
  constexpr double kHeldS = 60;
  if (row_w > budget_w) {
    under_since_s = -1;
    return;
  }
  if (under_since_s < 0) under_since_s = since_s - period_s;
  if (since_s - under_since_s >= kHeldS || (length_s > 0 && since_s >= length_s)) {
    complied_after_s = under_since_s;
  }
}

core::Result<core::Duration> ParseTimeOfDay(std::string_view text) {
  const std::vector<std::string_view> parts = core::Split(core::Trim(text), ':');
  const auto fail = [&] {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("'{}' is not a time of day (expected HH:MM or HH:MM:SS, e.g. 17:00)", text)));
  };
  if (parts.size() < 2 || parts.size() > 3) return fail();
  long long fields[3] = {0, 0, 0};
  const long long limits[3] = {23, 59, 59};
  for (std::size_t k = 0; k < parts.size(); ++k) {
    if (parts[k].size() != 2) return fail();
    auto v = core::ParseInteger(parts[k]);
    if (!v || *v < 0 || *v > limits[k]) return fail();
    fields[k] = *v;
  }
  return std::chrono::hours(fields[0]) + std::chrono::minutes(fields[1]) +
         std::chrono::seconds(fields[2]);
}

namespace {

core::Result<core::Duration> DurationAt(const core::YamlReader& item, std::string_view key) {
  HEADROOM_ASSIGN_OR_RETURN(std::string text, item.String(key));
  auto d = core::ParseDuration(text);
  if (!d) return core::Fail(item.ErrorAt(key, d.error().message()));
  return *d;
}

core::Result<BudgetWindow> ParseWindow(const core::YamlReader& item, bool once_allowed) {
  HEADROOM_RETURN_IF_ERROR(
      item.CheckKnownKeys({"daily", "at", "for", "shed", "comply_within", "reason"}));
  BudgetWindow w;
  if (item.Has("daily") == item.Has("at")) {
    return core::Fail(item.ErrorAt(
        "", once_allowed ? "give daily: HH:MM or at: DURATION, one" : "give daily: HH:MM"));
  }
  if (item.Has("at") && !once_allowed) {
    return core::Fail(item.ErrorAt("at",
                                   "a one-off lowered budget comes through PUT /v1/budget; the "
                                   "schedule holds daily windows (daily: HH:MM, UTC)"));
  }
  w.daily = item.Has("daily");
  if (w.daily) {
    HEADROOM_ASSIGN_OR_RETURN(std::string text, item.String("daily"));
    auto start = ParseTimeOfDay(text);
    if (!start) return core::Fail(item.ErrorAt("daily", start.error().message()));
    w.start = *start;
  } else {
    HEADROOM_ASSIGN_OR_RETURN(w.start, DurationAt(item, "at"));
  }
  HEADROOM_ASSIGN_OR_RETURN(w.length, DurationAt(item, "for"));
  HEADROOM_ASSIGN_OR_RETURN(std::string shed, item.String("shed"));
  auto pct = core::ParsePercent(shed);
  if (!pct) return core::Fail(item.ErrorAt("shed", pct.error().message()));
  w.shed = *pct / 100;
  if (item.Has("comply_within")) {
    HEADROOM_ASSIGN_OR_RETURN(w.comply_within, DurationAt(item, "comply_within"));
  }
  HEADROOM_ASSIGN_OR_RETURN(w.reason, item.String("reason"));
  if (core::Trim(w.reason).empty()) return core::Fail(item.ErrorAt("reason", "must not be empty"));
  return w;
}

}  // namespace

core::Result<BudgetSchedule> ParseBudgetSchedule(const std::vector<core::YamlReader>& items,
                                                 bool once_allowed) {
  std::vector<BudgetWindow> windows;
  for (const core::YamlReader& item : items) {
    HEADROOM_ASSIGN_OR_RETURN(BudgetWindow w, ParseWindow(item, once_allowed));
    windows.push_back(std::move(w));
    // Make's checks, located at the item that breaks them.
    auto made = BudgetSchedule::Make(windows);
    if (!made) return core::Fail(item.ErrorAt("", made.error().message()));
  }
  return BudgetSchedule::Make(std::move(windows));
}

}  // namespace headroom::policy
