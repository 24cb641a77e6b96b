// A serving engine's latency histograms (vLLM's vllm:time_to_first_token_seconds and
// vllm:inter_token_latency_seconds) as its /metrics page shows them: fixed buckets, cumulative
// counts. The energy saver (policy::EnergySaver) reads a window of them, the agent from the
// engine's page and the simulator from the histograms its instances would keep, through the one
// quantile here, so both read the same signal at the same resolution. Pure; thread-compatible.
#ifndef HEADROOM_TELEMETRY_ENGINE_HISTOGRAM_H_
#define HEADROOM_TELEMETRY_ENGINE_HISTOGRAM_H_

#include <array>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/time.h"

namespace headroom::telemetry {

// vLLM's bucket bounds, in seconds (vllm/v1/metrics/loggers.py, the same since 0.6; TensorRT-LLM
// exports the same). Coarse: a P50 inside one bucket is interpolated, not seen.
inline constexpr std::array<double, 22> kVllmTtftBucketsS = {
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
    1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0};
inline constexpr std::array<double, 19> kVllmItlBucketsS = {
    0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
    0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};

// One histogram's cumulative bucket counts by upper bound, summed over label sets, +Inf last.
struct LatencyHistogramSample {
  std::vector<std::pair<double, double>> buckets;  // (le, cumulative count), le ascending
  double count() const { return buckets.empty() ? 0 : buckets.back().second; }
};

// The `q` quantile of the observations made between two samples of one histogram, interpolated
// linearly within its bucket as Prometheus' histogram_quantile does (the +Inf bucket's answer is
// the highest finite bound); nullopt when nothing was observed between them. InvalidArgument when
// the buckets differ or a count went down (the engine restarted): no window can be trusted.
[[nodiscard]] core::Result<std::optional<double>> WindowQuantile(
    const LatencyHistogramSample& before, const LatencyHistogramSample& after, double q);

// The histogram an engine keeps, for the simulator's engines: observations counted in fixed
// buckets (+Inf added after the given bounds).
class BucketCounter {
 public:
  // REQUIRES: bounds ascending, finite.
  explicit BucketCounter(std::span<const double> bounds);
  void Add(double seconds, double count = 1);
  // `n` observations first, first + growth, ..., first + (n - 1) * growth, each counted `weight`
  // times: the tokens of a run of decode steps, each step a little longer than the last.
  void AddRun(double first, double growth, std::int64_t n, double weight);
  LatencyHistogramSample Sample() const;

 private:
  std::vector<double> bounds_;
  std::vector<double> cumulative_;  // by bound, then +Inf
};

// The energy saver's signal from an engine's two latency histograms, sampled at the end of each
// window: the inter-token P50 since the previous sample, and the first-token P99 since the oldest
// sample within `ttft_span` (a P99 needs a few hundred requests; one window holds a few dozen, and
// its P99 is its slowest request). The agent reads its engine's scrapes through it and the
// simulator its engines' histograms, so the two step the saver on the same signal.
class EngineLatencyReader {
 public:
  explicit EngineLatencyReader(core::Duration ttft_span) : ttft_span_(ttft_span) {}
  struct Reading {
    std::optional<double> itl_p50_s;
    std::optional<double> ttft_p99_s;
    std::string invalid;  // a count went down or the buckets changed: why (history restarted)
    bool first = false;   // nothing before it since the start or the last Reset: no window
  };
  Reading Add(const LatencyHistogramSample& itl, const LatencyHistogramSample& ttft,
              core::Duration at);
  // A failed scrape: the next sample starts afresh.
  void Reset();

 private:
  core::Duration ttft_span_;
  std::optional<LatencyHistogramSample> last_itl_;
  std::deque<std::pair<core::Duration, LatencyHistogramSample>> ttft_;  // oldest first
};

}  // namespace headroom::telemetry

#endif  // HEADROOM_TELEMETRY_ENGINE_HISTOGRAM_H_
