// A serving engine's Prometheus metrics page, as the node agent scrapes it (vLLM's names). A page
// that parses gives finite, non-negative counts; a window of two pages a share in [0, 1]; a
// latency histogram that parses is cumulative, and a window's quantile lies within its bounds.
#include <algorithm>
#include <cmath>

#include "fuzz/fuzz_support.h"
#include "service/engine_metrics.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace headroom;
  const std::string_view text = fuzz::Text(data, size);
  if (auto h = service::ParseLatencyHistogram(text, "vllm:time_to_first_token_seconds");
      h && h->has_value()) {
    const service::LatencyHistogramSample& after = **h;
    service::LatencyHistogramSample before = after;
    for (auto& [le, count] : before.buckets) count = 0;
    if (auto q = service::WindowQuantile(before, after, 0.5); q && q->has_value()) {
      const std::size_t n = after.buckets.size();
      const double top = n >= 2 ? after.buckets[n - 2].first : 0;
      const double bottom = std::min(0.0, after.buckets.front().first);
      HEADROOM_CHECK(std::isfinite(**q) && **q >= bottom && **q <= std::max(0.0, top));
    }
  }
  auto sample = service::ParseEngineMetrics(text, service::EngineMetricNames{});
  if (!sample) return 0;
  for (double v :
       {sample->prompt_tokens, sample->generation_tokens, sample->running, sample->waiting}) {
    HEADROOM_CHECK(std::isfinite(v) && v >= 0);
  }
  service::EngineWindow window;
  window.Add({}, core::TimePoint{});
  window.Add(*sample, core::TimePoint{} + std::chrono::seconds(10));
  if (auto signal = window.Signal(core::TimePoint{} + std::chrono::seconds(10))) {
    HEADROOM_CHECK(signal->prefill_share >= 0 && signal->prefill_share <= 1);
  }
  return 0;
}
