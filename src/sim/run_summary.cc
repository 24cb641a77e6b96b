#include "sim/run_summary.h"

#include <algorithm>

#include <fmt/format.h>

namespace headroom::sim {

namespace {

RunSummary::Class SummarizeClass(const ClassMetrics& m, double span_s) {
  RunSummary::Class c;
  c.ttft_p50_s = m.ttft.Quantile(0.5);
  c.ttft_p99_s = m.ttft.Quantile(0.99);
  c.tbt_p50_s = m.tbt.Quantile(0.5);
  c.tbt_p99_s = m.tbt.Quantile(0.99);
  c.e2e_p50_s = m.e2e.Quantile(0.5);
  c.e2e_p90_s = m.e2e.Quantile(0.9);
  c.e2e_p99_s = m.e2e.Quantile(0.99);
  // Over the whole simulated span, drain included: a row that falls behind takes longer.
  c.throughput_tok_s = span_s > 0 ? m.output_tokens / span_s : 0;
  c.requests = m.requests;
  return c;
}

}  // namespace

double PctChange(double value, double base) { return base > 0 ? (value / base - 1) * 100 : 0; }

RunSummary Summarize(const RowResult& r) {
  RunSummary s;
  s.policy = r.policy;
  s.servers = r.servers;
  s.hp_servers = r.hp_servers;
  s.budget_w = r.budget_w;
  s.peak_frac = r.budget_w > 0 ? r.peak_w / r.budget_w : 0;
  s.mean_frac = r.budget_w > 0 ? r.mean_w / r.budget_w : 0;
  s.max_rise_frac = r.budget_w > 0 ? r.max_rise_w / r.budget_w : 0;
  s.brake_events = r.brake_events;
  s.over_budget_episodes = r.over_budget_episodes;
  s.over_budget_s = r.over_budget_s;
  s.capped_server_fraction =
      r.simulated_s > 0 ? r.capped_server_seconds / (r.simulated_s * r.servers) : 0;
  s.energy_j = r.energy_j;
  s.stopped_early = r.stopped_early;
  s.simulated_s = r.simulated_s;
  s.power = r.power_windows;
  for (const policy::Event& e : r.events) {
    if (e.to == "brake") s.brake_s.push_back(core::ToSeconds(e.at));
  }
  s.hp = SummarizeClass(r.hp, r.simulated_s);
  s.lp = SummarizeClass(r.lp, r.simulated_s);
  return s;
}

Impact Compare(const RunSummary& run, const RunSummary& base) {
  Impact i;
  i.hp_p50_e2e_pct = PctChange(run.hp.e2e_p50_s, base.hp.e2e_p50_s);
  i.hp_p99_e2e_pct = PctChange(run.hp.e2e_p99_s, base.hp.e2e_p99_s);
  i.lp_p50_e2e_pct = PctChange(run.lp.e2e_p50_s, base.lp.e2e_p50_s);
  i.lp_p99_e2e_pct = PctChange(run.lp.e2e_p99_s, base.lp.e2e_p99_s);
  i.hp_throughput_pct = PctChange(run.hp.throughput_tok_s, base.hp.throughput_tok_s);
  i.lp_throughput_pct = PctChange(run.lp.throughput_tok_s, base.lp.throughput_tok_s);
  return i;
}

std::string PowerViolation(const RunSummary& run, const Slo& slo) {
  if (run.brake_events > slo.max_brake_events) {
    return fmt::format("{} brake event{}", run.brake_events, run.brake_events == 1 ? "" : "s");
  }
  // A row with no brake in its policy must still never exceed its budget: that is what the
  // brake (or the breaker) would have caught.
  if (run.over_budget_episodes > slo.max_brake_events) {
    return fmt::format("over budget {} time{}", run.over_budget_episodes,
                       run.over_budget_episodes == 1 ? "" : "s");
  }
  return "";
}

std::string SloViolation(const RunSummary& run, const Impact& impact, const Slo& slo) {
  if (std::string power = PowerViolation(run, slo); !power.empty()) return power;
  if (impact.hp_p50_e2e_pct > slo.hp_p50_e2e_pct) {
    return fmt::format("HP P50 +{:.1f}%", impact.hp_p50_e2e_pct);
  }
  if (impact.hp_p99_e2e_pct > slo.hp_p99_e2e_pct) {
    return fmt::format("HP P99 +{:.1f}%", impact.hp_p99_e2e_pct);
  }
  if (impact.lp_p50_e2e_pct > slo.lp_p50_e2e_pct) {
    return fmt::format("LP P50 +{:.1f}%", impact.lp_p50_e2e_pct);
  }
  return "";
}

}  // namespace headroom::sim
