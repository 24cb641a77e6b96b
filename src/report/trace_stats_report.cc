#include "report/trace_stats_report.h"

#include <chrono>

#include <fmt/format.h>

#include "format/table.h"
#include "sim/trace_writer.h"

namespace headroom::report {
namespace {

using nlohmann::ordered_json;

std::string TraceDate(core::Duration since_epoch) {
  return sim::FormatAzureTimestamp(since_epoch).substr(0, 10);
}

std::string TraceWeekday(core::Duration since_epoch) {
  static constexpr const char* kNames[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
  const std::chrono::sys_time<core::Duration> t(since_epoch);
  return kNames[std::chrono::weekday(std::chrono::floor<std::chrono::days>(t)).c_encoding()];
}

// Midnight (UTC, since 1970) of the trace's first day, where its clock is known.
std::optional<core::Duration> TraceFirstMidnight(const sim::TraceStats& s) {
  if (!s.start_time) return std::nullopt;
  const std::chrono::sys_time<core::Duration> t(*s.start_time);
  return std::chrono::floor<std::chrono::days>(t).time_since_epoch();
}

ordered_json TokenStatsJson(const sim::TokenStats& t) {
  return {{"mean", t.mean}, {"min", t.min}, {"p50", t.p50},
          {"p90", t.p90},   {"p99", t.p99}, {"max", t.max}};
}

}  // namespace

ordered_json TraceStatsJson(const std::string& trace, const sim::TraceStats& s) {
  ordered_json out;
  out["trace"] = trace;
  out["start"] =
      s.start_time ? ordered_json(sim::FormatAzureTimestamp(*s.start_time)) : ordered_json(nullptr);
  out["count"] = s.count;
  out["duration_s"] = s.duration_s;
  out["mean_rate_per_s"] = s.mean_rate_per_s;
  out["peak_rate_1s_per_s"] = s.peak_rate_1s_per_s;
  out["peak_rate_60s_per_s"] = s.peak_rate_60s_per_s;
  out["prompt_tokens"] = TokenStatsJson(s.prompt_tokens);
  out["output_tokens"] = TokenStatsJson(s.output_tokens);
  out["high_priority"] = s.high_priority;
  out["low_priority"] = s.low_priority;
  out["per_hour_of_day"] = s.per_hour_of_day;
  const auto midnight = TraceFirstMidnight(s);
  out["per_day"] = ordered_json::array();
  for (size_t d = 0; d < s.per_day.size(); ++d) {
    ordered_json day = {{"day", d}, {"count", s.per_day[d]}};
    if (midnight) {
      const core::Duration at = *midnight + std::chrono::days(d);
      day["date"] = TraceDate(at);
      day["weekday"] = TraceWeekday(at);
    }
    out["per_day"].push_back(day);
  }
  return out;
}

std::string TraceStatsText(const std::string& trace, const sim::TraceStats& s,
                           const format::TextStyle& style) {
  std::string text = fmt::format(
      "{}: {} requests over {:.1f} s ({:.2f} h){}\n", trace, s.count, s.duration_s,
      s.duration_s / 3600,
      s.start_time ? " from " + sim::FormatAzureTimestamp(*s.start_time).substr(0, 19) + " UTC"
                   : "");
  text +=
      fmt::format("Rate: mean {:.3f} req/s; peak {:.0f} req/s over 1 s, {:.2f} req/s over 60 s\n",
                  s.mean_rate_per_s, s.peak_rate_1s_per_s, s.peak_rate_60s_per_s);
  if (s.high_priority + s.low_priority > 0) {
    text += fmt::format("Priority: {} high, {} low, {} unspecified\n", s.high_priority,
                        s.low_priority, s.count - s.high_priority - s.low_priority);
  }
  format::TextTable tokens({{"TOKENS", format::TextTable::Align::kLeft},
                            {"MEAN"},
                            {"MIN"},
                            {"P50"},
                            {"P90"},
                            {"P99"},
                            {"MAX"}});
  for (const auto& [name, t] :
       {std::pair{"prompt", s.prompt_tokens}, {"output", s.output_tokens}}) {
    tokens.AddRow({name, fmt::format("{:.1f}", t.mean), std::to_string(t.min),
                   std::to_string(t.p50), std::to_string(t.p90), std::to_string(t.p99),
                   std::to_string(t.max)});
  }
  text += "\n" + tokens.Render(style);
  const std::string clock = s.start_time ? "UTC" : "from the first request";
  const int days_seen = static_cast<int>(s.per_day.size());
  std::vector<format::TextTable::Column> columns = {{"HOUR"}, {"REQUESTS"}, {"SHARE"}};
  if (days_seen > 1) columns.push_back({"REQ/S"});
  format::TextTable hours(columns);
  for (int h = 0; h < 24; ++h) {
    const auto n = static_cast<double>(s.per_hour_of_day[h]);
    if (n == 0) continue;
    std::vector<std::string> row = {fmt::format("{:02}", h), fmt::format("{}", n),
                                    fmt::format("{:.1f}%", 100 * n / static_cast<double>(s.count))};
    if (days_seen > 1) row.push_back(fmt::format("{:.3f}", n / days_seen / 3600));
    hours.AddRow(row);
  }
  text += fmt::format("\nRequests by hour of day ({}{}):\n", clock,
                      days_seen > 1 ? fmt::format("; REQ/S: mean over {} days", days_seen) : "") +
          hours.Render(style);
  if (days_seen > 1) {
    const auto midnight = TraceFirstMidnight(s);
    format::TextTable days({{"DAY"},
                            {"DATE", format::TextTable::Align::kLeft},
                            {"WEEKDAY", format::TextTable::Align::kLeft},
                            {"REQUESTS"}});
    for (int d = 0; d < days_seen; ++d) {
      const core::Duration at = midnight ? *midnight + std::chrono::days(d) : core::Duration{};
      days.AddRow({std::to_string(d), midnight ? TraceDate(at) : "-",
                   midnight ? TraceWeekday(at) : "-", std::to_string(s.per_day[d])});
    }
    text += "\nRequests by day:\n" + days.Render(style);
  }
  return text;
}

}  // namespace headroom::report
