#include "report/plan_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "policy/policy_factory.h"

namespace headroom::report {
namespace {

std::string Plural(std::uint64_t n, const char* word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

}  // namespace

PowerTrace ReducePowerSamples(const std::vector<sim::PowerSample>& power, int max_windows) {
  PowerTrace trace;
  const std::size_t n = power.size();
  const std::size_t per_window =
      std::max<std::size_t>(1, (n + static_cast<std::size_t>(max_windows) - 1) /
                                   static_cast<std::size_t>(std::max(1, max_windows)));
  for (std::size_t i = 0; i < n; i += per_window) {
    const std::size_t end = std::min(n, i + per_window);
    PowerWindow w;
    // A sample's time is the end of its metering period.
    const double period_s = i > 0 ? power[i].time_s - power[i - 1].time_s : power[i].time_s;
    w.start_s = power[i].time_s - period_s;
    double sum = 0;
    for (std::size_t k = i; k < end; ++k) {
      sum += power[k].row_w;
      w.max_w = std::max(w.max_w, power[k].row_w);
    }
    w.mean_w = sum / static_cast<double>(end - i);
    if (trace.windows.empty()) trace.window_s = period_s * static_cast<double>(per_window);
    trace.windows.push_back(w);
  }
  return trace;
}

std::optional<PowerTrace> PlanRunPowerTrace(const sim::RunSummary& run) {
  if (run.power.empty()) return std::nullopt;
  return PowerTrace{.policy = run.policy,
                    .servers = run.servers,
                    .budget_w = run.budget_w,
                    .window_s = run.power_window_s,
                    .windows = run.power,
                    .brake_s = run.brake_s};
}

PowerTrace ReducePowerTrace(const sim::RowResult& result, int max_windows) {
  PowerTrace trace = ReducePowerSamples(result.power, max_windows);
  trace.policy = result.policy;
  trace.servers = result.servers;
  trace.budget_w = result.budget_w;
  for (const policy::Event& e : result.events) {
    if (e.to == "brake") {
      trace.brake_s.push_back(std::chrono::duration<double>(e.at).count());
    }
  }
  return trace;
}

std::string UnseenEvents(const sim::CountRisk& risk) {
  std::string out = fmt::format("{}/{}", risk.unseen_weeks_with_power_event, risk.unseen_weeks);
  if (risk.unseen_weeks_near_budget > 0) {
    out += fmt::format(" (+{} near)", risk.unseen_weeks_near_budget);
  }
  return out;
}

std::string UnseenWeeks(const sim::CapacityPlan& plan, const sim::PolicyPlan& p) {
  if (plan.validation_weeks == 0) return "-";
  std::string cell = "-";
  if (const auto risk = sim::CountRiskAt(plan, p.policy, p.max_servers);
      risk && risk->unseen_weeks > 0) {
    cell = fmt::format("{}, <={:.1f}%", UnseenEvents(*risk), risk->unseen_risk_upper * 100);
  }
  if (p.searched_servers > p.max_servers) cell += fmt::format(", was {}", p.searched_servers);
  return cell;
}

std::vector<WeekAtAnswer> WeeksAtAnswer(const sim::CapacityPlan& plan, const sim::PolicyPlan& p) {
  std::vector<WeekAtAnswer> weeks;
  if (p.max_servers == 0) return weeks;
  for (const sim::RunSummary& run : plan.runs) {
    if (run.policy != p.policy || run.servers != p.max_servers) continue;
    WeekAtAnswer w{.week = sim::WeekName(plan, run.week), .run = &run};
    if (run.policy != policy::kUncappedPolicy) {
      for (const sim::RunSummary& base : plan.runs) {
        if (base.policy == policy::kUncappedPolicy && base.servers == run.servers &&
            base.week == run.week) {
          w.impact = sim::Compare(run, base);
          break;
        }
      }
    }
    weeks.push_back(std::move(w));
  }
  std::stable_sort(weeks.begin(), weeks.end(), [](const WeekAtAnswer& a, const WeekAtAnswer& b) {
    return a.run->week < b.run->week;
  });
  return weeks;
}

std::string PlanQuestion(const sim::CapacityPlan& plan) {
  return fmt::format(
      "How many servers fit in the row's {:.0f} kW power budget (provisioned for {}) while the "
      "latency SLO holds and the brake never engages?",
      plan.baseline.budget_w / 1e3, plan.baseline_servers);
}

namespace {

// "0 power events in 59 unseen weeks, weekly risk at most 4.9% (95%)"
std::string RiskSentence(const sim::CapacityPlan& plan, const sim::PolicyPlan& p) {
  const auto risk = sim::CountRiskAt(plan, p.policy, p.max_servers);
  if (!risk || risk->unseen_weeks == 0) return "weekly risk not bounded";
  return fmt::format(
      "{} in {} unseen weeks, weekly risk at most {:.1f}% ({:g}%)",
      Plural(static_cast<std::uint64_t>(risk->unseen_weeks_with_power_event), "power event"),
      risk->unseen_weeks, risk->unseen_risk_upper * 100, plan.confidence * 100);
}

// "2 of 59 weeks with a power event (3.4%, at most 10.3%)"; with weeks near the budget not run
// whole, "at least 2 of 59 weeks with a power event, 5 more near the budget (at most 20.1%)".
std::string WeeksWithEvents(const sim::CountRisk& r) {
  if (r.unseen_weeks_near_budget == 0) {
    return fmt::format("{} of {} weeks with a power event ({:.1f}%, at most {:.1f}%)",
                       r.unseen_weeks_with_power_event, r.unseen_weeks,
                       100.0 * r.unseen_weeks_with_power_event / r.unseen_weeks,
                       r.unseen_risk_upper * 100);
  }
  return fmt::format(
      "at least {} of {} weeks with a power event, {} more near the budget (at "
      "most {:.1f}%)",
      r.unseen_weeks_with_power_event, r.unseen_weeks, r.unseen_weeks_near_budget,
      r.unseen_risk_upper * 100);
}

}  // namespace

std::string PlanAnswer(const sim::CapacityPlan& plan, const sim::Slo& slo) {
  const sim::PolicyPlan* chosen = sim::ChosenPolicy(plan);
  if (chosen == nullptr) {
    return fmt::format("No capping policy keeps the SLO even at the provisioned {} servers",
                       plan.baseline_servers);
  }
  // The latency change nearest its bound is the one that limits the row.
  struct Latency {
    const char* name;
    double pct;
    double bound_pct;
  };
  const sim::Impact& i = chosen->impact;
  Latency worst{"HP P50", i.hp_p50_e2e_pct, slo.hp_p50_e2e_pct};
  for (const Latency& l : {Latency{"HP P99", i.hp_p99_e2e_pct, slo.hp_p99_e2e_pct},
                           Latency{"LP P50", i.lp_p50_e2e_pct, slo.lp_p50_e2e_pct}}) {
    if (l.bound_pct > 0 && l.pct / l.bound_pct > worst.pct / std::max(worst.bound_pct, 1e-9)) {
      worst = l;
    }
  }
  std::string answer =
      fmt::format("{} fits {} servers, {:+.1f}% over {}, {} {:+.1f}%, {}", chosen->policy,
                  chosen->max_servers, chosen->extra_pct, plan.baseline_servers, worst.name,
                  worst.pct, Plural(chosen->at_max.brake_events, "brake"));
  // What capping adds is measured against the uncapped row, when the plan has it.
  for (const sim::PolicyPlan& p : plan.policies) {
    if (p.policy == policy::kUncappedPolicy)
      answer += fmt::format(" (uncapped: {})", p.max_servers);
  }
  const std::string stress = plan.stress_cases.empty()
                                 ? ""
                                 : fmt::format(" and {} stress case{}", plan.stress_cases.size(),
                                               plan.stress_cases.size() == 1 ? "" : "s");
  answer += fmt::format("; safe on {} planning week{}{}", plan.planning_weeks,
                        plan.planning_weeks == 1 ? "" : "s", stress);
  if (plan.validation_weeks == 0) return answer + "; weekly risk not bounded (no unseen weeks)";
  answer += "; " + RiskSentence(plan, *chosen);
  // The others at the chosen count, where the plan judged them: what the caps buy.
  for (const sim::PolicyPlan& p : plan.policies) {
    if (&p == chosen) continue;
    const auto risk = sim::CountRiskAt(plan, p.policy, chosen->max_servers);
    if (!risk || risk->unseen_weeks == 0) continue;
    answer += fmt::format("; {} at {}: {}", p.policy, chosen->max_servers, WeeksWithEvents(*risk));
  }
  // The capping policy the unseen weeks lowered most (else the uncapped row): what planning on
  // the planning weeks alone would have missed.
  const sim::PolicyPlan* lowered = nullptr;
  const auto rank = [](const sim::PolicyPlan& p) {
    return std::pair{p.policy != policy::kUncappedPolicy, p.searched_servers - p.max_servers};
  };
  for (const sim::PolicyPlan& p : plan.policies) {
    if (!p.validation_failure.empty() && (lowered == nullptr || rank(p) > rank(*lowered))) {
      lowered = &p;
    }
  }
  if (lowered != nullptr) {
    answer += fmt::format("; {}: {}", lowered->policy, lowered->validation_failure);
  }
  return answer;
}

}  // namespace headroom::report
