// What `headroom trace synth` and `headroom trace stats` do below their flags: a long request
// trace synthesized from a real one (sim::TraceSynth, a daily curve, weekends and bursts) and
// written in the Azure 2023 CSV format; and the summary of any trace (sim::ComputeTraceStats).
// Thread-compatible.
#ifndef HEADROOM_APP_TRACE_H_
#define HEADROOM_APP_TRACE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "core/result.h"
#include "core/time.h"
#include "sim/trace_stats.h"
#include "sim/trace_synth.h"

namespace headroom::app {

// The named traces (azure-conv, ...), comma-separated: what --from and `trace stats` take besides
// a file.
std::string NamedTraceNames();

// sim::kDefaultSynthStart as "YYYY-MM-DD HH:MM:SS" (--start's default).
std::string DefaultSynthStart();

struct TraceSynthRequest {
  std::string from = {};          // as --from: a named trace or a CSV file
  std::string duration = {};      // as --duration
  std::string out = {};           // as --out: the CSV file written
  std::string start = {};         // as --start: UTC, "YYYY-MM-DD HH:MM:SS"
  std::string burst_length = {};  // as --burst-length
  sim::SynthParams params = {};   // the rest; duration, start and burst length come from above
  const std::atomic<bool>* stop = nullptr;  // set: nothing written, kCancelled
  std::function<void(double fraction, std::int64_t written)> progress = {};
};

struct TraceSynthResult {
  std::int64_t requests = 0;
  core::Duration duration{0};
};

// Errors name the flag (--duration, --burst-length, --start, --out, --from) or the writer's file.
[[nodiscard]] core::Result<TraceSynthResult> SynthesizeTrace(const TraceSynthRequest& request);

struct TraceStatsRequest {
  std::string trace = {};  // a named trace or a CSV file
};

[[nodiscard]] core::Result<sim::TraceStats> SummarizeTrace(const TraceStatsRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_TRACE_H_
