// Request traces (the Azure LLM inference trace and the generic CSV; the header line picks the
// format): every row is read until the end or the first error, arrivals never go backwards; then
// the same text through `headroom trace stats`.
#include "fuzz/fuzz_support.h"
#include "sim/trace_reader.h"
#include "sim/trace_stats.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using headroom::sim::TraceReader;
  const std::string text(headroom::fuzz::Text(data, size));
  auto reader = TraceReader::FromText("fuzz.csv", text);
  if (!reader) return 0;
  double last = 0;
  for (;;) {
    auto request = (*reader)->Next();
    if (!request || !*request) break;
    HEADROOM_CHECK((*request)->arrival_s >= last) << "arrivals went backwards";
    last = (*request)->arrival_s;
  }
  auto again = TraceReader::FromText("fuzz.csv", text);
  HEADROOM_CHECK(again.has_value());
  (void)headroom::sim::ComputeTraceStats(**again);
  return 0;
}
