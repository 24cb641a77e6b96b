// BudgetSchedule: when the grid asks the row to draw less than its provisioned budget, and how
// much less: a utility's demand-response call ("shed 25% for three hours") placed once, or a
// contract's window repeated every day. The simulator reads it on its own clock, the controller
// daemon (daily windows only) on the wall clock in UTC. Pure: time arrives as an argument.
//
// The schedule's timeline: a duration since midnight of day 0 (the simulator's start, or the
// Unix epoch for the daemon), so that a daily window's start is the time of day.
#ifndef HEADROOM_POLICY_BUDGET_SCHEDULE_H_
#define HEADROOM_POLICY_BUDGET_SCHEDULE_H_

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "core/units.h"
#include "core/yaml_reader.h"

namespace headroom::policy {

// One lowered budget. Its start is a time of day when `daily`, else a time on the timeline.
struct BudgetWindow {
  core::Duration start{0};
  core::Duration length{0};
  bool daily = false;
  double shed = 0;  // the share of the provisioned budget the row gives up, in (0, 1)
  // The row has this long to come under the lowered budget: its caps have an actuation delay to
  // take, and the brake guards the budget before it until then.
  core::Duration comply_within{std::chrono::seconds(60)};
  std::string reason;

  // The budget it asks of a row provisioned for `provisioned`.
  core::Watts Budget(core::Watts provisioned) const { return provisioned * (1 - shed); }
};

// The window in force at a time, one occurrence of it.
struct BudgetOccurrence {
  int window = 0;  // index into BudgetSchedule::windows()
  core::Duration begins{0};
  core::Duration ends{0};
};

class BudgetSchedule {
 public:
  BudgetSchedule() = default;
  // kInvalidArgument naming the window (by its index and reason) for a length that is not
  // positive, a daily window of a day or more or starting at 24:00 or later, a shed outside
  // (0, 1), a comply_within that is not positive, or two windows that overlap.
  [[nodiscard]] static core::Result<BudgetSchedule> Make(std::vector<BudgetWindow> windows);

  // The occurrence in force at `t` (its window's start inclusive, its end exclusive).
  std::optional<BudgetOccurrence> At(core::Duration t) const;
  // The first occurrence that begins after `t` (a daily window's next day included).
  std::optional<BudgetOccurrence> Next(core::Duration t) const;
  const std::vector<BudgetWindow>& windows() const { return windows_; }
  bool empty() const { return windows_.empty(); }

 private:
  explicit BudgetSchedule(std::vector<BudgetWindow> windows) : windows_(std::move(windows)) {}
  std::vector<BudgetWindow> windows_;
};

// How a row is meeting one lowered budget, from its metered samples: the simulator's budget
// events and the controller daemon's status both keep one.
struct BudgetCompliance {
  // From the budget's start to when the row came under it to stay a minute (or to its end): the
  // start of the first metered minute at or under it; nullopt: not yet.
  std::optional<double> complied_after_s;
  double over_after_deadline_s = 0;  // metered time over it after its time to comply
  double peak_after_deadline_w = 0;
  double under_since_s = -1;  // the present run of samples at or under it began (-1: none)

  // One metered sample of `period_s` ending `since_s` after the budget began; `length_s` is how
  // long the budget lasts (0: until further notice).
  void Meter(double since_s, double row_w, double period_s, double budget_w, double comply_within_s,
             double length_s);
};

// A `budget_schedule:` list of a scenario or of the controller's row.yaml: each item
// `daily: "HH:MM"` or (with `once_allowed`) `at: DURATION` since the timeline's start, `for:
// DURATION`, `shed: PERCENT`, optional `comply_within: DURATION` (60 s) and `reason: TEXT`
// (required). Errors name the file, line and field.
[[nodiscard]] core::Result<BudgetSchedule> ParseBudgetSchedule(
    const std::vector<core::YamlReader>& items, bool once_allowed);

// "17:00" or "07:30:15" -> the time of day; kInvalidArgument otherwise.
[[nodiscard]] core::Result<core::Duration> ParseTimeOfDay(std::string_view text);

}  // namespace headroom::policy

#endif  // HEADROOM_POLICY_BUDGET_SCHEDULE_H_
