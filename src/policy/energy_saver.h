// EnergySaver: the `energy-saver` clock policy of one server (issue 51). Decode is memory-bound,
// so a lower SM clock saves much of its energy for little latency; this step lowers the clock
// one notch at a time while the engine's own latencies (inter-token P50 and first-token P99, from
// its histograms over the last window) stay within their SLO with a margin, raises it to the
// highest clock at once when either breaks its SLO, and returns to the highest clock whenever
// the signal is missing, invalid or stale: it never lowers a clock on a signal it cannot trust.
// After a breach it does not go back down to the clock that broke the SLO for a while.
//
// It runs per server (the agent's, beside its engine), not per row: the latencies it answers to
// are one engine's, and a server reaches its engine's metrics without a round trip to the
// controller. The row controller's cap always wins: the clock applied is the lower of the two.
// Pure: time arrives as an argument; thread-compatible.
#ifndef HEADROOM_POLICY_ENERGY_SAVER_H_
#define HEADROOM_POLICY_ENERGY_SAVER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "core/units.h"
#include "model/gpu_spec.h"

namespace headroom::policy {

struct EnergySaverSettings {
  // The clocks the step may choose, highest first (a GPU's supported clocks, thinned).
  std::vector<core::Megahertz> clocks = {};
  double itl_p50_slo_s = 0;   // inter-token latency, P50
  double ttft_p99_slo_s = 0;  // time to first token, P99
  // Lower only while both latencies are at most (1 - margin) of their SLO.
  double margin = 0.1;
  // A window older than this is not trusted: the highest clock.
  core::Duration stale_after = std::chrono::seconds(30);
  // After any change of clock, this long before the next step down: the engine's window must
  // show the new clock's latencies first.
  core::Duration settle = std::chrono::seconds(30);
  // After a breach, the clock that broke the SLO (and those below it) is not chosen again for
  // this long.
  core::Duration breach_memory = std::chrono::minutes(10);
};

// The engine's latencies over its last window, as the agent read them from its metrics.
struct LatencyWindow {
  core::Duration at{0};                   // when the window ended, on the step's clock
  std::optional<double> itl_p50_s = {};   // absent: no token generated in the window
  std::optional<double> ttft_p99_s = {};  // absent: no request started in the window
  std::string invalid = {};  // non-empty: the scrape failed, a counter reset, malformed; why
};

// What decided a step, for a label of few values (the reason says it with its figures).
enum class SaverVerdict { kNoSignal, kBreach, kSlack, kHolding };

struct ClockChoice {
  core::Megahertz saver{0};    // what the energy saver wants
  core::Megahertz applied{0};  // the lower of it and the row's cap
  bool row_cap_wins = false;
  bool changed = false;  // the saver's own clock changed this step
  SaverVerdict verdict = SaverVerdict::kNoSignal;
  std::string reason = {};  // why the saver holds this clock
};

// Where prefill runs at the top clock whatever the saver's (set per iteration by the engine, or
// lifted by the agent's prefill boost while a prompt waits), the first token's latency is not the
// saver's to answer for: `settings` with no first-token SLO, so that it steps on the inter-token
// latency alone. The simulator and the agent both take their settings through it.
EnergySaverSettings WithPrefillAtTopClock(EnergySaverSettings settings);

// The saver's clock under the row's cap: the lower of the two applied, and whether the cap won.
ClockChoice UnderRowCap(core::Megahertz saver, std::optional<core::Megahertz> row_cap);

// The clocks an energy saver chooses from on a GPU: its maximum, then about `step` of the maximum
// lower each time, down to `floor` of it (never below the GPU's least clock), on its clock grid,
// highest first. REQUIRES: floor in (0, 1], step in (0, 1).
std::vector<core::Megahertz> EnergySaverClocks(const model::GpuSpec& spec, double floor,
                                               double step);

class EnergySaver {
 public:
  // kInvalidArgument naming the setting: no clocks, clocks not strictly descending or not
  // positive, an SLO that is not positive, a margin outside [0, 1), durations below zero.
  [[nodiscard]] static core::Result<EnergySaver> Make(EnergySaverSettings settings);

  // One step at `now`: the window the agent last read (nullopt: none yet) and the row
  // controller's cap (nullopt: none).
  ClockChoice Step(core::Duration now, const std::optional<LatencyWindow>& window,
                   std::optional<core::Megahertz> row_cap);

  core::Megahertz clock() const { return settings_.clocks[level_]; }
  core::Megahertz highest() const { return settings_.clocks.front(); }
  std::size_t level() const { return level_; }  // the index of clock() in the clocks, 0 highest

 private:
  explicit EnergySaver(EnergySaverSettings settings) : settings_(std::move(settings)) {}
  // Why the window cannot be trusted at `now`; empty when it can.
  std::string Distrust(core::Duration now, const std::optional<LatencyWindow>& window) const;
  // The breach that `w` shows against the SLO; empty when none.
  std::string Breach(const LatencyWindow& w) const;
  bool Slack(const LatencyWindow& w) const;
  std::size_t LowestAllowed(core::Duration now) const;

  EnergySaverSettings settings_;
  std::size_t level_ = 0;  // index into clocks: 0 is the highest
  std::optional<core::Duration> last_change_;
  std::optional<core::Duration> breach_at_;
  std::size_t breach_level_ = 0;
};

}  // namespace headroom::policy

#endif  // HEADROOM_POLICY_ENERGY_SAVER_H_
