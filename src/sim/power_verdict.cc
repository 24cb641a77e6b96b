#include "sim/power_verdict.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "policy/policy_factory.h"
#include "sim/scenario_run.h"
#include "sim/workload.h"

namespace headroom::sim {
namespace {

// The load is sampled this often (and at least twice within the shortest burst): it moves with
// the daily curve (hours) and the bursts (minutes), and each hot sample's window is widened by
// a step on either side.
constexpr double kLoadStepS = 10;
// A synthesized trace's block (trace_synth.cc): windows start and end on whole ones.
constexpr double kBlockS = 60;
// Where a week's load never reaches VerdictOptions::hot_share, the times within this share of its
// highest are hot: with the daily curve's peak/trough of 2.5, about two hours around each peak.
constexpr double kNearHighest = 0.95;

// One stream's load (tokens/s) at a time, walking its bursts forward.
class StreamLoad {
 public:
  explicit StreamLoad(const TraceSynth& s) : s_(s), bursts_(s.Bursts()), tokens_(s.MeanTokens()) {}
  double At(double t_s) {
    while (next_ < bursts_.size() && bursts_[next_].second <= t_s) ++next_;
    const bool in = next_ < bursts_.size() && bursts_[next_].first <= t_s;
    return s_.RateAt(t_s, in) * tokens_;
  }
  double Calm(double t_s) const { return s_.RateAt(t_s, false) * tokens_; }
  double ShortestBurstS() const {
    double shortest = kLoadStepS;
    for (const auto& [b, e] : bursts_) shortest = std::min(shortest, e - b);
    return shortest;
  }

 private:
  const TraceSynth& s_;
  std::vector<std::pair<double, double>> bursts_;
  double tokens_;
  std::size_t next_ = 0;
};

}  // namespace

std::vector<VerdictWindow> HotWindows(const std::vector<const TraceSynth*>& streams,
                                      double duration_s, const VerdictOptions& options) {
  std::vector<StreamLoad> loads;
  double step = kLoadStepS;
  for (const TraceSynth* s : streams) {
    loads.emplace_back(*s);
    step = std::min(step, loads.back().ShortestBurstS() / 2);
  }
  const double before = core::ToSeconds(options.warmup) + step;
  const double after = core::ToSeconds(options.tail) + step;
  double peak = 0;  // the weekday peak without bursts
  for (double t = 0; t < duration_s; t += step) {
    double calm = 0;
    for (const StreamLoad& l : loads) calm += l.Calm(t);
    peak = std::max(peak, calm);
  }
  std::vector<VerdictWindow> out;
  if (peak <= 0) return out;
  std::vector<std::pair<double, double>> shares;  // (time, load / peak)
  double highest = 0;
  for (double t = 0; t < duration_s; t += step) {
    double load = 0;
    for (StreamLoad& l : loads) load += l.At(t);
    shares.emplace_back(t, load / peak);
    highest = std::max(highest, load / peak);
  }
  // A week whose load never reaches the share (no bursts, or small ones) is judged where it is
  // nearest its own highest: its daily peaks.
  const double hot = std::min(options.hot_share, highest * kNearHighest);
  for (const auto& [t, share] : shares) {
    if (share < hot) continue;
    const double begin = std::max(0.0, std::floor((t - before) / kBlockS) * kBlockS);
    const double end = std::min(duration_s, std::ceil((t + after) / kBlockS) * kBlockS);
    if (!out.empty() && begin <= out.back().end_s) {
      out.back().end_s = std::max(out.back().end_s, end);
      out.back().hottest = std::max(out.back().hottest, share);
    } else {
      out.push_back({begin, end, share});
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const VerdictWindow& a, const VerdictWindow& b) {
    return a.hottest > b.hottest;
  });
  return out;
}

double PeakStretch(const std::vector<const TraceSynth*>& streams, double duration_s,
                   double length_s) {
  std::vector<StreamLoad> loads;
  for (const TraceSynth* s : streams) loads.emplace_back(*s);
  std::vector<double> load;  // per kLoadStepS
  for (double t = 0; t < duration_s; t += kLoadStepS) {
    double sum = 0;
    for (StreamLoad& l : loads) sum += l.At(t);
    load.push_back(sum);
  }
  const std::size_t n =
      std::min(load.size(), static_cast<std::size_t>(std::max(1.0, length_s / kLoadStepS)));
  double sum = 0;
  for (std::size_t k = 0; k < n; ++k) sum += load[k];
  double best = sum;
  std::size_t best_start = 0;
  for (std::size_t k = n; k < load.size(); ++k) {
    sum += load[k] - load[k - n];
    if (sum > best) {
      best = sum;
      best_start = k - n + 1;
    }
  }
  const double start = static_cast<double>(best_start) * kLoadStepS;
  return std::floor(start / kBlockS) * kBlockS;
}

namespace {

// The windows' runs added up: power events, the highest peak and rise, time over budget and
// capped server-time.
struct WindowsRun {
  RunSummary sum;
  double capped_server_s = 0;

  // The run's power alone, from its result: a window's latencies are not wanted.
  void Add(const RowResult& r) {
    sum.budget_w = r.budget_w;
    sum.hp_servers = r.hp_servers;
    if (r.budget_w > 0) {
      sum.peak_frac = std::max(sum.peak_frac, r.peak_w / r.budget_w);
      sum.max_rise_frac = std::max(sum.max_rise_frac, r.max_rise_w / r.budget_w);
    }
    sum.brake_events += r.brake_events;
    sum.over_budget_episodes += r.over_budget_episodes;
    sum.over_budget_s += r.over_budget_s;
    sum.stopped_early = sum.stopped_early || r.stopped_early;
    sum.simulated_s += r.simulated_s;
    capped_server_s += r.capped_server_seconds;
  }
};

}  // namespace

namespace {

// One window of the week as a scenario of its own, with fresh shadows: which of them stayed quiet.
core::Result<RowResult> RunWindow(const ResolvedScenario& scenario, const VerdictWindow& w,
                                  const std::string& policy, int servers, const std::string& trace,
                                  const std::vector<std::string>& shadows,
                                  const std::atomic<bool>* stop) {
  ResolvedScenario window = scenario;
  window.scenario.workload.synth_window = {core::FromSeconds(w.begin_s),
                                           core::FromSeconds(w.end_s)};
  RunOptions ro;
  ro.stop = stop;
  ro.keep_power_series = false;
  ro.expected_duration_s = w.end_s - w.begin_s;
  ro.stop_after_power_events = scenario.scenario.slo.max_brake_events;
  std::vector<std::unique_ptr<policy::RowPolicy>> made;
  HEADROOM_RETURN_IF_ERROR(AddShadows(scenario, shadows, &made, &ro));
  return RunScenario(window, policy, servers, trace, ro);
}

}  // namespace

core::Result<PowerVerdict> JudgePower(const ResolvedScenario& scenario, const std::string& policy,
                                      int servers, const std::string& trace,
                                      const VerdictOptions& options,
                                      const std::vector<std::string>& shadows,
                                      const std::atomic<bool>* stop) {
  const Scenario& s = scenario.scenario;
  HEADROOM_ASSIGN_OR_RETURN(
      const std::vector<std::unique_ptr<TraceSynth>> streams,
      SynthStreams(s, trace, servers, HpServers(servers, scenario.row.hp_server_fraction), s.seed));
  if (streams.empty()) {
    return core::Fail(core::Error::InvalidArgument(
        "a power verdict reads a synthesized week: this workload replays real traces"));
  }
  std::vector<const TraceSynth*> views;
  for (const auto& p : streams) views.push_back(p.get());
  WindowsRun run;
  run.sum.policy = policy;
  run.sum.servers = servers;
  run.sum.power_verdict = true;
  std::vector<bool> quiet(shadows.size(), true);
  for (const VerdictWindow& w : HotWindows(views, ExpectedDuration(s, trace), options)) {
    HEADROOM_ASSIGN_OR_RETURN(const RowResult r,
                              RunWindow(scenario, w, policy, servers, trace, shadows, stop));
    run.Add(r);
    for (std::size_t k = 0; k < quiet.size(); ++k) quiet[k] = quiet[k] && r.quiet_shadows[k];
    if (!PowerViolation(run.sum, s.slo).empty()) break;
  }
  if (run.sum.simulated_s > 0) {
    run.sum.capped_server_fraction = run.capped_server_s / (run.sum.simulated_s * servers);
  }
  run.sum.near_budget =
      PowerViolation(run.sum, s.slo).empty() && run.sum.peak_frac >= 1 - options.margin;
  PowerVerdict out{.summary = std::move(run.sum), .quiet = {}};
  for (std::size_t k = 0; k < quiet.size(); ++k) {
    if (quiet[k]) out.quiet.push_back(shadows[k]);
  }
  return out;
}

}  // namespace headroom::sim
