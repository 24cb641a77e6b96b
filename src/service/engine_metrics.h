// Engine metrics: the serving engine's own Prometheus metrics (vLLM's /metrics: counters of the
// prompt and generated tokens, gauges of the requests running and waiting; TGI and Triton have
// equivalents, named by configuration), scraped by the node agent and reduced to the window the
// row policy reads (policy::ServingSignal: the prefill share of tokens and the queue). The parse
// and the window are pure and tested on their own; EngineScraper does the HTTP GET with a bounded
// timeout.
#ifndef HEADROOM_SERVICE_ENGINE_METRICS_H_
#define HEADROOM_SERVICE_ENGINE_METRICS_H_

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "policy/energy_saver.h"
#include "policy/row_policy.h"
#include "telemetry/engine_histogram.h"

namespace httplib {
class Client;
}

namespace headroom::service {

// The engine's latency histograms and their window's quantile are telemetry's, the one reading
// the simulator's engines share (telemetry/engine_histogram.h).
using telemetry::LatencyHistogramSample;
using telemetry::WindowQuantile;

// The metric names to read (vLLM's by default).
struct EngineMetricNames {
  std::string prompt_tokens = "vllm:prompt_tokens_total";          // counter
  std::string generation_tokens = "vllm:generation_tokens_total";  // counter
  std::string running = "vllm:num_requests_running";               // gauge
  std::string waiting = "vllm:num_requests_waiting";               // gauge
  // Histograms, optional on the page (an engine without them still serves the mix-aware policy;
  // empty: not read). The inter-token latency is vLLM V1's vllm:inter_token_latency_seconds, the
  // gap between consecutive tokens of a request: the older vllm:time_per_output_token_seconds
  // holds the same observations but was deprecated in vLLM 0.11 (the per-request mean took the
  // name vllm:request_time_per_output_token_seconds) and is going away.
  std::string ttft = "vllm:time_to_first_token_seconds";  // histogram
  std::string itl = "vllm:inter_token_latency_seconds";   // histogram
  // The tokens of each engine step: its count is the engine's iterations, whose own cost the
  // J/token fit needs as a term of its own (telemetry::TokenEnergyFit).
  std::string iterations = "vllm:iteration_tokens_total";  // histogram
};

// One scrape: each metric summed over its label sets (one per model an engine serves).
struct EngineSample {
  double prompt_tokens = 0;
  double generation_tokens = 0;
  double running = 0;
  double waiting = 0;
  std::optional<LatencyHistogramSample> ttft = {};  // absent: the page has none
  std::optional<LatencyHistogramSample> itl = {};
  std::optional<double> iterations = {};  // the iterations histogram's count; absent: none
};

// The Prometheus text exposition format (0.0.4): `name{labels} value [timestamp]` lines, `#`
// comments. Every named counter and gauge must appear with finite, non-negative values; the
// histograms are read when present (ParseLatencyHistogram); anything else is InvalidArgument
// naming the metric or the line. (Written here because no Debian package parses
// this format for C++: prometheus-cpp only exposes metrics.)
[[nodiscard]] core::Result<EngineSample> ParseEngineMetrics(std::string_view text,
                                                            const EngineMetricNames& names);

// `name`'s histogram in the exposition (`name_bucket{le="..."}` lines); nullopt when the page has
// none. InvalidArgument naming the line for a bucket without a numeric `le`, a count that is not
// finite or is negative, buckets that are not cumulative, or no +Inf bucket.
[[nodiscard]] core::Result<std::optional<LatencyHistogramSample>> ParseLatencyHistogram(
    std::string_view text, std::string_view name);

// The window between the last two good scrapes. A failed scrape, or a counter that went down
// (the engine restarted), leaves no window until two more good scrapes: an agent never reports
// a signal it cannot vouch for. Its latencies (the energy saver's signal) come from the same two
// scrapes; after a failure or a reset they are marked invalid, with why, rather than dropped, so
// that the saver says why it went back to the highest clock. Thread-compatible.
class EngineWindow {
 public:
  // The scrapes the TTFT P99 is read over (the simulator's energy_saver.ttft_window default).
  static constexpr core::Duration kTtftSpan = std::chrono::minutes(5);
  void Add(const EngineSample& sample, core::TimePoint at);
  void Fail(std::string error);
  // The last window, its age counted to `now`; nullopt when there is none.
  std::optional<policy::ServingSignal> Signal(core::TimePoint now) const;
  // The engine's ITL P50 over the last window and TTFT P99 over the last kTtftSpan of scrapes
  // (telemetry::EngineLatencyReader, as the simulator reads its engines; `at` since the clock's
  // epoch); nullopt before the first window.
  const std::optional<policy::LatencyWindow>& latency() const { return latency_; }
  // Why there is no window (the last scrape's error), empty when there is one or none was tried.
  const std::string& error() const { return error_; }
  std::uint64_t failures() const { return failures_; }

 private:
  std::optional<EngineSample> last_;
  core::TimePoint last_at_{};
  std::optional<policy::ServingSignal> window_;
  core::TimePoint window_at_{};
  std::optional<policy::LatencyWindow> latency_;
  telemetry::EngineLatencyReader reader_{kTtftSpan};
  std::string error_;
  std::uint64_t failures_ = 0;
};

// GETs the engine's metrics page and parses it. Used by one thread at a time.
class EngineScraper {
 public:
  // url: http(s)://HOST:PORT/PATH (e.g. http://127.0.0.1:8000/metrics); every connect, read and
  // write gives up after `timeout`.
  EngineScraper(std::string url, EngineMetricNames names, core::Duration timeout);
  ~EngineScraper();
  [[nodiscard]] core::Result<EngineSample> Scrape();
  const std::string& url() const { return url_; }

 private:
  std::string url_;
  std::string path_;
  EngineMetricNames names_;
  std::unique_ptr<httplib::Client> client_;
};

// kInvalidArgument unless `url` is http(s)://HOST[:PORT]/PATH.
[[nodiscard]] core::Status CheckEngineMetricsUrl(std::string_view url);

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_ENGINE_METRICS_H_
