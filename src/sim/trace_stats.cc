#include "sim/trace_stats.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>

#include <fmt/format.h>

namespace headroom::sim {
namespace {

// Per-day counts stop here: a longer trace almost surely has its times in the wrong unit.
constexpr double kMaxDays = 3'660;

// Exact token count quantiles in memory bounded by the number of distinct counts (a few
// thousand in the Azure traces), however long the trace.
class TokenHistogram {
 public:
  void Add(int tokens) {
    ++counts_[tokens];
    sum_ += tokens;
    ++n_;
  }

  TokenStats Stats() const {
    TokenStats s;
    if (n_ == 0) return s;
    s.mean = static_cast<double>(sum_) / static_cast<double>(n_);
    s.min = counts_.begin()->first;
    s.max = counts_.rbegin()->first;
    s.p50 = Quantile(0.5);
    s.p90 = Quantile(0.9);
    s.p99 = Quantile(0.99);
    return s;
  }

 private:
  int Quantile(double q) const {
    const auto rank = static_cast<std::int64_t>(std::llround(q * static_cast<double>(n_ - 1)));
    std::int64_t seen = 0;
    for (const auto& [value, count] : counts_) {
      seen += count;
      if (seen > rank) return value;
    }
    return counts_.rbegin()->first;
  }

  std::map<int, std::int64_t> counts_;
  std::int64_t sum_ = 0;
  std::int64_t n_ = 0;
};

// The most arrivals in any window of `width_s` seconds: the maximum, over arrivals t, of the
// arrivals in (t - width, t].
class PeakWindow {
 public:
  explicit PeakWindow(double width_s) : width_s_(width_s) {}
  void Add(double t_s) {
    window_.push_back(t_s);
    // Not empty-checked only by the new arrival: at 1e16 s, t_s - 1 == t_s and it leaves too.
    while (!window_.empty() && window_.front() <= t_s - width_s_) window_.pop_front();
    peak_ = std::max(peak_, window_.size());
  }
  double peak_rate_per_s() const { return static_cast<double>(peak_) / width_s_; }

 private:
  double width_s_;
  std::deque<double> window_;
  size_t peak_ = 0;
};

}  // namespace

core::Result<TraceStats> ComputeTraceStats(RequestSource& source) {
  TraceStats stats;
  TokenHistogram prompt, output;
  PeakWindow second(1), minute(60);
  double clock_offset_s = 0;  // arrival 0's time since its midnight
  while (true) {
    HEADROOM_ASSIGN_OR_RETURN(const std::optional<TraceRequest> r, source.Next());
    if (!r) break;
    if (stats.count == 0) {
      stats.first_arrival_s = r->arrival_s;
      stats.start_time = source.start_time();
      if (stats.start_time) {
        const std::chrono::sys_time<core::Duration> start(*stats.start_time);
        clock_offset_s = core::ToSeconds(start - std::chrono::floor<std::chrono::days>(start));
      }
    }
    ++stats.count;
    stats.last_arrival_s = r->arrival_s;
    second.Add(r->arrival_s);
    minute.Add(r->arrival_s);
    prompt.Add(r->prompt_tokens);
    output.Add(r->output_tokens);
    if (r->priority == Priority::kHigh) ++stats.high_priority;
    if (r->priority == Priority::kLow) ++stats.low_priority;
    const double clock_s = std::max(0.0, clock_offset_s + r->arrival_s);
    if (clock_s >= kMaxDays * core::kSecondsPerDay) {
      return core::Fail(core::Error::InvalidArgument(fmt::format(
          "arrival at {} s is more than {} days into the trace; are its times in seconds?",
          r->arrival_s, kMaxDays)));
    }
    const auto day = static_cast<size_t>(clock_s / core::kSecondsPerDay);
    const auto hour =
        static_cast<size_t>((clock_s - static_cast<double>(day) * core::kSecondsPerDay) / 3600);
    ++stats.per_hour_of_day[std::min<size_t>(hour, 23)];
    if (stats.per_day.size() <= day) stats.per_day.resize(day + 1, 0);
    ++stats.per_day[day];
  }
  stats.duration_s = stats.last_arrival_s - stats.first_arrival_s;
  if (stats.duration_s > 0) {
    stats.mean_rate_per_s = static_cast<double>(stats.count) / stats.duration_s;
  }
  stats.peak_rate_1s_per_s = second.peak_rate_per_s();
  stats.peak_rate_60s_per_s = minute.peak_rate_per_s();
  stats.prompt_tokens = prompt.Stats();
  stats.output_tokens = output.Stats();
  return stats;
}

}  // namespace headroom::sim
