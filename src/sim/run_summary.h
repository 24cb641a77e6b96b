// One simulation reduced to what plans and summaries report (RunSummary: no series), its
// latency and throughput against the uncapped row at the same servers and week (Impact), and the
// SLO's judgement of it (scenario.h's Slo: power events first, then latency). Pure; thread-safe.
#ifndef HEADROOM_SIM_RUN_SUMMARY_H_
#define HEADROOM_SIM_RUN_SUMMARY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "sim/row_simulator.h"
#include "sim/scenario.h"

namespace headroom::sim {

// One simulation reduced to what plans and summaries report (no series).
struct RunSummary {
  std::string policy;
  int servers = 0;
  int hp_servers = 0;
  double budget_w = 0;
  double peak_frac = 0;
  double mean_frac = 0;
  double max_rise_frac = 0;  // within one actuation delay
  std::uint64_t brake_events = 0;
  std::uint64_t over_budget_episodes = 0;
  double over_budget_s = 0;
  double capped_server_fraction = 0;  // share of server-time under a cap
  double energy_j = 0;
  bool stopped_early = false;  // stopped at its first power event: metrics cover part of the trace
  // A week's power verdict (sim/power_verdict.h): only its hot windows were simulated, their
  // power alone summarized (no latencies, no mean power, no energy).
  bool power_verdict = false;
  // A power verdict without a power event whose windows came within its margin of the budget:
  // not decided by the windows alone (the whole week decides, where a plan needs it to).
  bool near_budget = false;
  double simulated_s = 0;  // the span simulated, drain included
  int week = 0;            // PlanCapacity's week index (CapacityPlan::week_seeds); else 0
  // The run's row power in windows of power_window_s (PlanOptions::power_windows; else empty)
  // and when the brake engaged: what a report plots of it, kept with every run of a plan.
  std::vector<PowerWindow> power;
  double power_window_s = 0;
  std::vector<double> brake_s;
  struct Class {
    double ttft_p50_s = 0, ttft_p99_s = 0, tbt_p50_s = 0, tbt_p99_s = 0, e2e_p50_s = 0,
           e2e_p90_s = 0, e2e_p99_s = 0, throughput_tok_s = 0;
    std::uint64_t requests = 0;
  };
  Class hp;
  Class lp;
};
RunSummary Summarize(const RowResult& result);

// The change of `value` against `base`, in percent; 0 without a base.
double PctChange(double value, double base);

// A run against the uncapped baseline at the same servers: changes in percent.
struct Impact {
  double hp_p50_e2e_pct = 0, hp_p99_e2e_pct = 0, lp_p50_e2e_pct = 0, lp_p99_e2e_pct = 0,
         hp_throughput_pct = 0, lp_throughput_pct = 0;
};
Impact Compare(const RunSummary& run, const RunSummary& baseline);
// Empty when the run keeps the SLO, else the first reason it does not.
std::string SloViolation(const RunSummary& run, const Impact& impact, const Slo& slo);
// The power part of it alone (brake events, time over budget), which needs no baseline.
std::string PowerViolation(const RunSummary& run, const Slo& slo);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_RUN_SUMMARY_H_
