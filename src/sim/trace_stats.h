// Statistics of a request trace, computed in one streaming pass over any RequestSource: rates
// (mean, and peaks over 1 s and 60 s windows), token count distributions, and arrivals by hour
// of day and by day. Memory: a window's arrivals, one counter per distinct token count and one
// per day; never the trace. Thread-safe (no state).
#ifndef HEADROOM_SIM_TRACE_STATS_H_
#define HEADROOM_SIM_TRACE_STATS_H_

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "sim/request_source.h"

namespace headroom::sim {

// Quantiles by nearest rank (the value at index round(q x (n - 1)) of the sorted values), exact.
struct TokenStats {
  double mean = 0;
  int min = 0;
  int p50 = 0;
  int p90 = 0;
  int p99 = 0;
  int max = 0;
};

struct TraceStats {
  std::int64_t count = 0;
  double first_arrival_s = 0;
  double last_arrival_s = 0;
  double duration_s = 0;       // last - first arrival
  double mean_rate_per_s = 0;  // count / duration; 0 for a trace spanning no time
  // The most arrivals in any window of 1 s (60 s), per second.
  double peak_rate_1s_per_s = 0;
  double peak_rate_60s_per_s = 0;
  TokenStats prompt_tokens;
  TokenStats output_tokens;
  std::int64_t high_priority = 0;
  std::int64_t low_priority = 0;
  // The source's wall-clock time (UTC, since 1970) of arrival 0, where it knows it. Hours and
  // days below are on that clock; without it, arrival 0 counts as midnight.
  std::optional<core::Duration> start_time;
  std::array<std::int64_t, 24> per_hour_of_day = {};
  std::vector<std::int64_t> per_day;  // [0]: the day of arrival 0
};

// Reads `source` to its end; its errors pass through.
[[nodiscard]] core::Result<TraceStats> ComputeTraceStats(RequestSource& source);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_TRACE_STATS_H_
