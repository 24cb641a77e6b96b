#include "sim/capacity_planner.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "policy/policy_factory.h"

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

double Pct(double value, double base) { return base > 0 ? (value / base - 1) * 100 : 0; }

struct Job {
  std::string policy;
  int servers = 0;
};

// Runs the jobs on `threads` threads; results in job order. The first error wins.
core::Result<std::vector<RunSummary>> RunAll(const ResolvedScenario& scenario,
                                             const std::vector<Job>& jobs,
                                             const PlanOptions& options) {
  std::vector<RunSummary> out(jobs.size());
  std::vector<std::optional<core::Error>> errors(jobs.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      RunOptions run;
      run.stop = options.stop;
      run.keep_power_series = false;
      // A run that has broken the power SLO is done, except the baseline: the other policies'
      // latencies are compared with it.
      if (jobs[i].policy != policy::kUncappedPolicy) {
        run.stop_after_power_events = scenario.scenario.slo.max_brake_events;
      }
      auto result = RunScenario(scenario, jobs[i].policy, jobs[i].servers, options.trace, run);
      if (result) {
        out[i] = Summarize(*result);
      } else {
        errors[i] = result.error();
      }
    }
  };
  const int threads = std::clamp(options.threads, 1, static_cast<int>(jobs.size()));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (auto& e : errors) {
    if (e) return core::Fail(*e);
  }
  return out;
}

}  // namespace

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
  s.hp = SummarizeClass(r.hp, r.simulated_s);
  s.lp = SummarizeClass(r.lp, r.simulated_s);
  return s;
}

Impact Compare(const RunSummary& run, const RunSummary& base) {
  Impact i;
  i.hp_p50_e2e_pct = Pct(run.hp.e2e_p50_s, base.hp.e2e_p50_s);
  i.hp_p99_e2e_pct = Pct(run.hp.e2e_p99_s, base.hp.e2e_p99_s);
  i.lp_p50_e2e_pct = Pct(run.lp.e2e_p50_s, base.lp.e2e_p50_s);
  i.lp_p99_e2e_pct = Pct(run.lp.e2e_p99_s, base.lp.e2e_p99_s);
  i.hp_throughput_pct = Pct(run.hp.throughput_tok_s, base.hp.throughput_tok_s);
  i.lp_throughput_pct = Pct(run.lp.throughput_tok_s, base.lp.throughput_tok_s);
  return i;
}

std::string SloViolation(const RunSummary& run, const Impact& impact, const Slo& slo) {
  if (run.brake_events > slo.max_brake_events) {
    return fmt::format("{} brake event{}", run.brake_events, run.brake_events == 1 ? "" : "s");
  }
  // A row with no brake in its policy must still never exceed its budget: that is what the
  // brake (or the breaker) would have caught.
  if (run.over_budget_episodes > slo.max_brake_events) {
    return fmt::format("over budget {} time{}", run.over_budget_episodes,
                       run.over_budget_episodes == 1 ? "" : "s");
  }
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

const PolicyPlan* ChosenPolicy(const CapacityPlan& plan) {
  const PolicyPlan* best = nullptr;
  for (const PolicyPlan& p : plan.policies) {
    if (p.policy == policy::kUncappedPolicy || p.max_servers == 0) continue;
    if (best == nullptr || p.max_servers > best->max_servers) best = &p;
  }
  return best;
}

CapacityBounds CapacityUnderSlo(const CapacityPlan& plan, const std::string& policy,
                                const Slo& slo) {
  std::map<int, const RunSummary*> runs, baseline;
  for (const RunSummary& r : plan.runs) {
    if (r.policy == policy) runs[r.servers] = &r;
    if (r.policy == policy::kUncappedPolicy) baseline[r.servers] = &r;
  }
  CapacityBounds bounds;
  for (const auto& [servers, run] : runs) {  // in ascending server count
    const auto base = baseline.find(servers);
    if (base == baseline.end()) continue;
    if (!SloViolation(*run, Compare(*run, *base->second), slo).empty()) {
      bounds.fails = servers;
      break;
    }
    bounds.fits = servers;
  }
  return bounds;
}

core::Result<CapacityPlan> PlanCapacity(const ResolvedScenario& scenario,
                                        const PlanOptions& options) {
  const Scenario& s = scenario.scenario;
  std::vector<std::string> policies = options.policies.empty() ? s.plan_policies : options.policies;
  if (policies.empty()) policies = policy::PolicyNames();
  for (const std::string& p : policies) {
    HEADROOM_RETURN_IF_ERROR(policy::MakePolicy(p, scenario.params));
  }
  const int n0 = s.servers;
  const int n_max = static_cast<int>(std::floor(n0 * (1 + s.plan_max_extra_pct / 100.0)));
  std::map<std::pair<std::string, int>, RunSummary> done;
  CapacityPlan plan;
  plan.baseline_servers = n0;
  // Binary search per policy on [n0, n_max]: lo keeps the SLO (or is n0 - 1), hi does not (or is
  // n_max + 1). Monotone in practice: more servers at the same per-server load, more power.
  struct Search {
    int lo, hi;
  };
  std::vector<Search> search(policies.size(), Search{n0 - 1, n_max + 1});
  const int rounds_estimate =
      static_cast<int>(std::ceil(std::log2(static_cast<double>(n_max - n0 + 2))));
  const int total_estimate = rounds_estimate * static_cast<int>(policies.size()) * 2 + 1;
  // The baseline itself first.
  const std::string uncapped(policy::kUncappedPolicy);
  std::vector<Job> jobs{{uncapped, n0}};
  while (true) {
    std::vector<Job> todo;
    for (const Job& j : jobs) {
      if (!done.count({j.policy, j.servers}) &&
          std::none_of(todo.begin(), todo.end(), [&](const Job& t) {
            return t.policy == j.policy && t.servers == j.servers;
          })) {
        todo.push_back(j);
      }
    }
    if (!todo.empty()) {
      HEADROOM_ASSIGN_OR_RETURN(std::vector<RunSummary> results, RunAll(scenario, todo, options));
      for (std::size_t i = 0; i < todo.size(); ++i) {
        done[{todo[i].policy, todo[i].servers}] = results[i];
      }
      plan.simulations += static_cast<int>(todo.size());
      if (options.progress) options.progress(plan.simulations, total_estimate);
    }
    // Advance every search whose midpoint (and its baseline) is known; collect what is missing.
    jobs.clear();
    bool searching = false;
    for (std::size_t k = 0; k < policies.size(); ++k) {
      Search& sr = search[k];
      while (sr.hi - sr.lo > 1) {
        const int mid = sr.lo + (sr.hi - sr.lo) / 2;
        auto run = done.find({policies[k], mid});
        auto base = done.find({uncapped, mid});
        if (run == done.end() || base == done.end()) {
          if (run == done.end()) jobs.push_back({policies[k], mid});
          if (base == done.end()) jobs.push_back({uncapped, mid});
          searching = true;
          break;
        }
        const bool ok =
            SloViolation(run->second, Compare(run->second, base->second), s.slo).empty();
        (ok ? sr.lo : sr.hi) = mid;
      }
    }
    if (!searching) break;
  }
  plan.baseline = done.at({uncapped, n0});
  for (std::size_t k = 0; k < policies.size(); ++k) {
    PolicyPlan pp;
    pp.policy = policies[k];
    const Search& sr = search[k];
    if (sr.lo >= n0) {
      pp.max_servers = sr.lo;
      pp.extra_pct = (static_cast<double>(sr.lo) / n0 - 1) * 100;
      pp.at_max = done.at({pp.policy, sr.lo});
      pp.impact = Compare(pp.at_max, done.at({uncapped, sr.lo}));
    }
    if (sr.hi <= n_max) {
      const RunSummary& fail = done.at({pp.policy, sr.hi});
      pp.limit = fmt::format("{} servers: {}", sr.hi,
                             SloViolation(fail, Compare(fail, done.at({uncapped, sr.hi})), s.slo));
    } else {
      pp.limit = fmt::format("search bound ({} servers, +{}%)", n_max, s.plan_max_extra_pct);
    }
    plan.policies.push_back(std::move(pp));
  }
  for (const auto& [key, run] : done) plan.runs.push_back(run);
  return plan;
}

core::Result<Calibration> CalibrateLoad(const ResolvedScenario& scenario, double target,
                                        double tolerance, const PlanOptions& options) {
  if (!(target > 0 && target < 1)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("calibration target {} is not a fraction of the budget in (0, 1)", target)));
  }
  Calibration c;
  const auto peak_at = [&](double factor) -> core::Result<double> {
    ResolvedScenario scaled = scenario;
    scaled.scenario.workload.hp_rate_per_server *= factor;
    scaled.scenario.workload.lp_rate_per_server *= factor;
    RunOptions run;
    run.stop = options.stop;
    run.keep_power_series = false;
    HEADROOM_ASSIGN_OR_RETURN(RowResult r,
                              RunScenario(scaled, std::string(policy::kUncappedPolicy),
                                          scenario.scenario.servers, options.trace, run));
    ++c.simulations;
    if (options.progress) options.progress(c.simulations, 12);
    return r.peak_w / r.budget_w;
  };
  // Bracket the factor, then bisect in log space (peak power rises monotonically with load).
  double lo = 1, hi = 1;
  HEADROOM_ASSIGN_OR_RETURN(double p, peak_at(1));
  double p_lo = p, p_hi = p;
  for (int i = 0; p_lo > target && i < 12; ++i) {
    hi = lo, p_hi = p_lo;
    lo /= 2;
    HEADROOM_ASSIGN_OR_RETURN(p_lo, peak_at(lo));
  }
  for (int i = 0; p_hi < target && i < 12; ++i) {
    lo = hi, p_lo = p_hi;
    hi *= 2;
    HEADROOM_ASSIGN_OR_RETURN(p_hi, peak_at(hi));
  }
  if (p_lo > target || p_hi < target) {
    return core::Fail(core::Error::FailedPrecondition(fmt::format(
        "no load reaches a peak of {:.1f}% of the budget (idle row {:.1f}%, busiest tried "
        "{:.1f}%)",
        target * 100, p_lo * 100, p_hi * 100)));
  }
  c.factor = lo, c.peak_frac = p_lo;
  for (int i = 0; i < 20; ++i) {
    const double mid = std::sqrt(lo * hi);
    HEADROOM_ASSIGN_OR_RETURN(double pm, peak_at(mid));
    c.factor = mid, c.peak_frac = pm;
    if (std::abs(pm - target) <= tolerance) break;
    (pm < target ? lo : hi) = mid;
  }
  c.hp_rate_per_server = scenario.scenario.workload.hp_rate_per_server * c.factor;
  c.lp_rate_per_server = scenario.scenario.workload.lp_rate_per_server * c.factor;
  return c;
}

}  // namespace headroom::sim
