// A week's power verdict: did the row brake or go over its budget? Decided from the windows of
// a synthesized week in which it can come near its budget, each simulated exactly, warm-started
// some minutes before it from an empty row, rather than from the whole week. The windows are
// where the week's expected load, its bursts included, reaches a share of the weekday peak
// without bursts (what a row's power follows); elsewhere the load is lower than in every window.
// A power event found in a window is the verdict (found in an exact simulation of that window).
// Where the windows find none but come within a margin of the budget, the verdict says so
// (near_budget): the whole week, simulated exactly, decides where it matters (a capacity plan
// runs it where the count's fit depends on it); only a week whose windows all stay below the
// margin is called safe from them alone. That this "safe" is the exact one is checked on
// hundreds of weeks (`headroom check-verdict`, docs/row-simulator.md), not proven.
// Thread-compatible.
#ifndef HEADROOM_SIM_POWER_VERDICT_H_
#define HEADROOM_SIM_POWER_VERDICT_H_

#include <atomic>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "sim/run_summary.h"
#include "sim/scenario.h"
#include "sim/trace_synth.h"

namespace headroom::sim {

struct VerdictOptions {
  // A time is hot when the week's expected load there (tokens/s, bursts included) is at least
  // this share of its weekday peak without bursts (or, in a week whose load never gets there,
  // 95% of its highest).
  double hot_share = 1.3;
  // Each hot stretch is simulated from this long before it (the row starts empty and uncapped)
  // to this long after it (a burst's backlog drains at full power). Checked by `headroom
  // check-verdict` (docs/row-simulator.md): at 2 and 1 minutes no false safe and the windows'
  // peak within 0.63 points of the whole week's on the built-in rows; at 1 minute and 30 s it
  // fell 1.2 points short, beyond the margin.
  core::Duration warmup = std::chrono::minutes(2);
  core::Duration tail = std::chrono::minutes(1);
  // Without a power event in its windows, a week whose windows' peak reaches (1 - margin) of the
  // budget is near it: the windows alone do not decide it.
  double margin = 0.01;
};

// [begin, end) in the trace's seconds.
struct VerdictWindow {
  double begin_s = 0;
  double end_s = 0;
  double hottest = 0;  // the highest load within it, a share of the weekday peak
  bool operator==(const VerdictWindow&) const = default;
};

// The hot windows of the streams' first `duration_s` seconds, each widened by the warm-up and
// the tail to whole minutes (a synthesized trace's blocks) and merged where they overlap, hottest
// first. Empty when no time is hot.
std::vector<VerdictWindow> HotWindows(const std::vector<const TraceSynth*>& streams,
                                      double duration_s, const VerdictOptions& options);

// The start (whole minutes, in the trace's seconds) of the `length_s`-long stretch of the
// streams' first `duration_s` seconds whose expected load, bursts included, is highest: where a
// week's demand-response event is hardest to hold (sim/demand_response.h).
double PeakStretch(const std::vector<const TraceSynth*>& streams, double duration_s,
                   double length_s);

// What a verdict found, and the shadows (RunOptions::shadows, by name) that never acted in any
// of its windows: their verdicts would have been this one, window for window.
struct PowerVerdict {
  RunSummary summary;
  std::vector<std::string> quiet;
};

// The verdict on a week of `scenario` (its seed) under `policy` at `servers`: each hot window
// run as a scenario of its own, hottest first, up to the first power event, with `shadows`
// stepped beside it afresh in each. Its summary, of the windows: power events, the highest peak,
// the time over budget, the share of server-time capped, stopped_early where it stopped at an
// event, near_budget where it found none but came within the margin; power_verdict set,
// latencies empty. kInvalidArgument when the workload is not synthesized.
[[nodiscard]] core::Result<PowerVerdict> JudgePower(const ResolvedScenario& scenario,
                                                    const std::string& policy, int servers,
                                                    const std::string& trace,
                                                    const VerdictOptions& options,
                                                    const std::vector<std::string>& shadows,
                                                    const std::atomic<bool>* stop);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_POWER_VERDICT_H_
