#include "service/grid_budget.h"

#include <fmt/format.h>

#include "core/parse.h"

namespace headroom::service {
namespace {

using nlohmann::ordered_json;

// Requests between two steps whose audit records are kept: an authenticated client sending
// faster than the loop writes cannot grow the controller's memory without bound.
constexpr std::size_t kMaxPendingAudit = 1000;

core::Duration SinceEpoch(WallTime t) {
  return std::chrono::duration_cast<core::Duration>(t.time_since_epoch());
}

WallTime AtEpochOffset(core::Duration d) {
  return WallTime(std::chrono::duration_cast<WallTime::duration>(d));
}

}  // namespace

GridBudget::GridBudget(GridConfig config, core::Watts provisioned)
    : config_(std::move(config)), provisioned_(provisioned) {}

GridBudget::InForce GridBudget::At(WallTime now) const {
  InForce out;
  {
    core::MutexLock lock(&mu_);
    if (signal_ && signal_->begins <= now && now < signal_->ends) {
      out.requested = signal_->watts;
      out.comply_within = signal_->comply_within;
      out.source = "signal";
      out.reason = signal_->reason;
      out.since = signal_->begins;
      out.until = signal_->ends;
      return out;
    }
  }
  const std::optional<policy::BudgetOccurrence> daily = config_.schedule.At(SinceEpoch(now));
  if (!daily) return out;
  const policy::BudgetWindow& w =
      config_.schedule.windows()[static_cast<std::size_t>(daily->window)];
  out.requested = w.Budget(provisioned_);
  out.comply_within = w.comply_within;
  out.source = "schedule";
  out.reason = w.reason;
  out.since = AtEpochOffset(daily->begins);
  out.until = AtEpochOffset(daily->ends);
  return out;
}

ordered_json GridBudget::SignalJson(const Signal& s) {
  return {{"budget_w", s.watts.value()},
          {"effective_at", FormatUtcTime(s.begins)},
          {"expires_at", FormatUtcTime(s.ends)},
          {"comply_within_s", core::ToSeconds(s.comply_within)},
          {"reason", s.reason}};
}

void GridBudget::Audit(ordered_json record) {
  if (audit_.size() < kMaxPendingAudit) audit_.push_back(std::move(record));
}

core::Result<ordered_json> GridBudget::Put(std::string_view body, WallTime now) {
  if (!signal_enabled()) {
    return core::Fail(core::Error::FailedPrecondition(
        "no budget signal is configured (row.yaml grid.token_file)"));
  }
  auto request = ParseBudgetRequest(body);
  core::MutexLock lock(&mu_);
  core::Status valid = core::Ok();
  if (!request) {
    valid = core::Fail(request.error());
  } else {
    valid = ValidateBudgetRequest(*request, config_.limits, provisioned_, now, last_change_);
  }
  if (!valid) {
    ++refused_;
    Audit({{"budget_request", "PUT"},
           {"accepted", false},
           {"at", FormatUtcTime(now)},
           {"error", valid.error().message()}});
    return core::Fail(valid.error());
  }
  const WallTime begins = request->effective_at ? std::max(*request->effective_at, now) : now;
  signal_ =
      Signal{.watts = request->budget,
             .begins = begins,
             .ends = begins + std::chrono::duration_cast<WallTime::duration>(request->duration),
             .comply_within = request->comply_within.value_or(config_.limits.comply_within),
             .reason = request->reason};
  last_change_ = now;
  ++accepted_;
  ordered_json accepted = SignalJson(*signal_);
  Audit({{"budget_request", "PUT"},
         {"accepted", true},
         {"at", FormatUtcTime(now)},
         {"budget", accepted}});
  return accepted;
}

core::Result<ordered_json> GridBudget::Delete(WallTime now) {
  core::MutexLock lock(&mu_);
  if (!signal_ || signal_->ends <= now) {
    ++refused_;
    return core::Fail(core::Error::NotFound("no budget signal is in force or pending"));
  }
  const ordered_json ended = SignalJson(*signal_);
  signal_.reset();
  last_change_ = now;
  ++accepted_;
  Audit({{"budget_request", "DELETE"},
         {"accepted", true},
         {"at", FormatUtcTime(now)},
         {"ended", ended}});
  return ordered_json{{"ended", ended}};
}

ordered_json GridBudget::Json(WallTime now) const {
  const InForce in = At(now);
  ordered_json j;
  j["provisioned_w"] = provisioned_.value();
  j["budget_w"] = in.requested.value_or(provisioned_).value();
  j["source"] = in.source;
  if (!in.reason.empty()) j["reason"] = in.reason;
  if (in.until) j["until"] = FormatUtcTime(*in.until);
  {
    core::MutexLock lock(&mu_);
    if (signal_ && now < signal_->ends) j["signal"] = SignalJson(*signal_);
  }
  j["signal_enabled"] = signal_enabled();
  j["schedule"] = ordered_json::array();
  for (const policy::BudgetWindow& w : config_.schedule.windows()) {
    const auto minutes = std::chrono::duration_cast<std::chrono::minutes>(w.start).count();
    j["schedule"].push_back({{"daily_utc", fmt::format("{:02}:{:02}", minutes / 60, minutes % 60)},
                             {"for", core::FormatDuration(w.length)},
                             {"shed", w.shed},
                             {"comply_within_s", core::ToSeconds(w.comply_within)},
                             {"reason", w.reason}});
  }
  return j;
}

std::vector<ordered_json> GridBudget::TakeAudit() {
  core::MutexLock lock(&mu_);
  std::vector<ordered_json> out;
  out.swap(audit_);
  return out;
}

std::uint64_t GridBudget::accepted() const {
  core::MutexLock lock(&mu_);
  return accepted_;
}

std::uint64_t GridBudget::refused() const {
  core::MutexLock lock(&mu_);
  return refused_;
}

}  // namespace headroom::service
