// The queries over a finished plan (capacity_planner.h): compiled into headroom_sim_results, which
// report/ links to read a plan without linking the simulator that made it.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "policy/policy_factory.h"
#include "sim/capacity_planner.h"
#include "sim/weekly_risk.h"

namespace headroom::sim {

const PolicyPlan* ChosenPolicy(const CapacityPlan& plan) {
  const PolicyPlan* best = nullptr;
  for (const PolicyPlan& p : plan.policies) {
    if (p.policy == policy::kUncappedPolicy || p.max_servers == 0) continue;
    if (best == nullptr || p.max_servers > best->max_servers) best = &p;
  }
  return best;
}

int SearchedWeeks(const CapacityPlan& plan) {
  return plan.planning_weeks + static_cast<int>(plan.stress_cases.size());
}

std::vector<CountRisk> PlanRisk(const CapacityPlan& plan) {
  std::vector<CountRisk> out;
  for (const PolicyPlan& p : plan.policies) {
    std::map<int, CountRisk> by_servers;
    for (const RunSummary& r : plan.runs) {
      if (r.policy != p.policy) continue;
      CountRisk& c = by_servers[r.servers];
      if (c.weeks == 0) {
        c = {.policy = p.policy, .servers = r.servers, .worst_peak_frac = r.peak_frac};
      }
      ++c.weeks;
      const bool event = r.brake_events > 0 || r.over_budget_episodes > 0;
      if (event) ++c.weeks_with_power_event;
      if (r.week >= SearchedWeeks(plan)) {
        ++c.unseen_weeks;
        if (event) ++c.unseen_weeks_with_power_event;
        if (r.near_budget) ++c.unseen_weeks_near_budget;
      }
      c.worst_peak_frac = std::max(c.worst_peak_frac, r.peak_frac);
      c.smallest_margin_w = r.budget_w * (1 - c.worst_peak_frac);
      c.most_capped_fraction = std::max(c.most_capped_fraction, r.capped_server_fraction);
    }
    for (auto& [servers, c] : by_servers) {
      if (c.unseen_weeks > 0) {
        c.unseen_risk_upper =
            WeeklyRiskUpperBound(c.unseen_weeks_with_power_event + c.unseen_weeks_near_budget,
                                 c.unseen_weeks, plan.confidence);
        c.unseen_risk_lower =
            WeeklyRiskLowerBound(c.unseen_weeks_with_power_event, c.unseen_weeks, plan.confidence);
      }
      out.push_back(std::move(c));
    }
  }
  return out;
}

std::optional<CountRisk> CountRiskAt(const CapacityPlan& plan, const std::string& policy,
                                     int servers) {
  for (CountRisk& c : PlanRisk(plan)) {
    if (c.policy == policy && c.servers == servers) return std::move(c);
  }
  return std::nullopt;
}

CapacityBounds CapacityUnderSlo(const CapacityPlan& plan, const std::string& policy,
                                const Slo& slo) {
  // By servers, then planning week.
  std::map<int, std::map<int, const RunSummary*>> runs, baseline;
  for (const RunSummary& r : plan.runs) {
    if (r.week >= SearchedWeeks(plan)) continue;
    if (r.policy == policy) runs[r.servers][r.week] = &r;
    if (r.policy == policy::kUncappedPolicy) baseline[r.servers][r.week] = &r;
  }
  CapacityBounds bounds;
  for (const auto& [servers, weeks] : runs) {  // in ascending server count
    if (static_cast<int>(weeks.size()) < SearchedWeeks(plan)) {
      continue;  // not evaluated on every planning week and stress case
    }
    // A week that breaks the power SLO needs no baseline (the plan ran none there).
    bool breaks = false, decided = true;
    for (const auto& [week, run] : weeks) {
      if (!PowerViolation(*run, slo).empty()) {
        breaks = true;
        continue;
      }
      const RunSummary* b = nullptr;
      if (const auto base = baseline.find(servers); base != baseline.end()) {
        if (const auto it = base->second.find(week); it != base->second.end()) b = it->second;
      }
      if (b == nullptr || b->stopped_early) {  // a partial baseline compares with nothing
        decided = false;
      } else if (!SloViolation(*run, Compare(*run, *b), slo).empty()) {
        breaks = true;
      }
    }
    if (breaks) {
      bounds.fails = servers;
      break;
    }
    if (decided) bounds.fits = servers;
  }
  return bounds;
}

std::string WeekName(const CapacityPlan& plan, int week) {
  const std::uint64_t seed = plan.week_seeds.at(static_cast<std::size_t>(week));
  if (week < plan.planning_weeks) return fmt::format("planning week {} (seed {})", week + 1, seed);
  if (week < SearchedWeeks(plan)) {
    std::string stress = plan.stress_cases.at(static_cast<std::size_t>(week - plan.planning_weeks));
    // "growth (load x1.1)" -> "stress growth (load x1.1; seed 1)"
    if (!stress.empty() && stress.back() == ')') {
      stress.insert(stress.size() - 1, fmt::format("; seed {}", seed));
    }
    return "stress " + stress;
  }
  return fmt::format("unseen week {} (seed {})", week - SearchedWeeks(plan) + 1, seed);
}

}  // namespace headroom::sim
