#include "report/plan_plots.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "policy/policy_factory.h"

namespace headroom::report {
namespace {

// A horizontal reference line from x0 to x1.
format::Series Level(std::string label, double y, double x0, double x1) {
  return {.label = std::move(label),
          .points = {{x0, y}, {x1, y}},
          .style = format::Style::kLines,
          .dashed = true};
}

format::CaptionedPlot CapacityPlot(const PlanReport& report) {
  const sim::CapacityPlan& plan = report.plan;
  format::Plot plot{.name = "capacity",
                    .title = "Servers that fit the row's budget, per policy",
                    .x_label = "policy",
                    .y_label = "servers keeping the SLO",
                    .y_min = 0.0};
  format::Series bars{.label = "servers", .style = format::Style::kBoxes};
  for (std::size_t i = 0; i < plan.policies.size(); ++i) {
    const double x = static_cast<double>(i);
    bars.points.emplace_back(x, plan.policies[i].max_servers);
    plot.x_tics.emplace_back(x, plan.policies[i].policy);
  }
  plot.series.push_back(std::move(bars));
  plot.series.push_back(Level(fmt::format("provisioned ({})", plan.baseline_servers),
                              plan.baseline_servers, -0.5,
                              static_cast<double>(plan.policies.size()) - 0.5));
  return {std::move(plot),
          "The largest server count each policy runs in the row's budget while it keeps the SLO "
          "(0: not even the provisioned row). The dashed line is the row as provisioned."};
}

}  // namespace

namespace {

// The budget as a step line: the provisioned one, down to each lowered budget while it lasts.
format::Series BudgetInForce(const PowerTrace& p, double end_h) {
  format::Series s{.label = "budget in force (the grid's)", .style = format::Style::kLines};
  const double full = p.budget_w / 1e3;
  s.points.emplace_back(0, full);
  for (const PowerTrace::Lowered& l : p.lowered) {
    s.points.emplace_back(l.start_s / 3600, full);
    s.points.emplace_back(l.start_s / 3600, l.budget_w / 1e3);
    s.points.emplace_back(l.end_s / 3600, l.budget_w / 1e3);
    s.points.emplace_back(l.end_s / 3600, full);
  }
  s.points.emplace_back(end_h, full);
  return s;
}

}  // namespace

std::optional<format::CaptionedPlot> ShedPowerPlot(const sim::ShedPlan& shed) {
  if (shed.power.empty()) return std::nullopt;
  format::Plot plot{.name = "demand-response",
                    .title = fmt::format("Row power through a {:.0f}% shed, {}", shed.shed * 100,
                                         shed.plotted_policy),
                    .x_label = "time from the stretch's start (h)",
                    .y_label = "row power (kW)"};
  for (const auto& [label, windows] : {std::pair{shed.plotted_policy, &shed.power},
                                       std::pair{std::string("uncapped"), &shed.uncapped_power}}) {
    format::Series mean{.label = fmt::format("{}, mean per window", label),
                        .style = format::Style::kLines};
    for (const PowerWindow& w : *windows)
      mean.points.emplace_back(w.start_s / 3600, w.mean_w / 1e3);
    plot.series.push_back(std::move(mean));
  }
  const double end_h = shed.power.back().start_s / 3600;
  PowerTrace budget;
  budget.budget_w = shed.budget_w;
  budget.lowered.push_back({.start_s = shed.event_at_s,
                            .end_s = shed.event_at_s + shed.length_s,
                            .budget_w = shed.budget_w * (1 - shed.shed)});
  plot.series.push_back(BudgetInForce(budget, end_h));
  return format::CaptionedPlot{
      std::move(plot),
      fmt::format("The chosen policy's row on the first planning week, asked at its peak to shed "
                  "{:.0f}% within {:.0f} s and hold it for {:.1f} h, against the uncapped row "
                  "over the same hours and the budget in force.",
                  shed.shed * 100, shed.comply_within_s, shed.length_s / 3600)};
}

format::CaptionedPlot RowPowerPlot(const PowerTrace& p, double t1_frac, double t2_frac,
                                   const std::string& what) {
  format::Plot plot{.name = "row-power",
                    .title = fmt::format("Row power, {} at {} servers", p.policy, p.servers),
                    .x_label = "time (h)",
                    .y_label = "row power (kW)"};
  format::Series mean{.label = fmt::format("mean per {:.0f} s", p.window_s),
                      .style = format::Style::kLines};
  format::Series max{.label = fmt::format("highest 1 s sample per {:.0f} s", p.window_s),
                     .style = format::Style::kLines};
  for (const PowerWindow& w : p.windows) {
    mean.points.emplace_back(w.start_s / 3600, w.mean_w / 1e3);
    max.points.emplace_back(w.start_s / 3600, w.max_w / 1e3);
  }
  const double end_h = p.windows.empty() ? 1 : (p.windows.back().start_s + p.window_s) / 3600;
  plot.series.push_back(std::move(max));
  plot.series.push_back(std::move(mean));
  plot.series.push_back(
      Level(fmt::format("budget ({:.0f} kW)", p.budget_w / 1e3), p.budget_w / 1e3, 0, end_h));
  plot.series.push_back(
      Level(fmt::format("T2 ({:.0f}%)", t2_frac * 100), t2_frac * p.budget_w / 1e3, 0, end_h));
  plot.series.push_back(
      Level(fmt::format("T1 ({:.0f}%)", t1_frac * 100), t1_frac * p.budget_w / 1e3, 0, end_h));
  if (!p.lowered.empty()) plot.series.push_back(BudgetInForce(p, end_h));
  format::Series brakes{.label = "brake engaged", .style = format::Style::kPoints};
  for (double t : p.brake_s) brakes.points.emplace_back(t / 3600, p.budget_w / 1e3);
  plot.series.push_back(std::move(brakes));
  return {std::move(plot),
          fmt::format("{} over the whole trace, against the budget and the T1/T2 capping "
                      "thresholds; {} brake{}.",
                      what, p.brake_s.size(), p.brake_s.size() == 1 ? "" : "s")};
}

namespace {

// Per policy, the points (servers, value(run)) of the plan's runs on its first planning week, in
// server order.
template <typename Value>
std::vector<format::Series> PerPolicy(const sim::CapacityPlan& plan, bool capping_only,
                                      Value value) {
  std::map<std::string, format::Series> by_policy;
  std::vector<std::string> order;
  for (const sim::PolicyPlan& p : plan.policies) {
    if (capping_only && p.policy == policy::kUncappedPolicy) continue;
    order.push_back(p.policy);
    by_policy[p.policy].label = p.policy;
  }
  for (const sim::RunSummary& run : plan.runs) {
    auto it = by_policy.find(run.policy);
    if (it == by_policy.end() || run.week != 0) continue;
    if (std::optional<double> y = value(run)) it->second.points.emplace_back(run.servers, *y);
  }
  std::vector<format::Series> out;
  for (const std::string& name : order) out.push_back(std::move(by_policy[name]));
  return out;
}

std::pair<double, double> ServerRange(const sim::CapacityPlan& plan) {
  double lo = plan.baseline_servers, hi = plan.baseline_servers;
  for (const sim::RunSummary& run : plan.runs) {
    lo = std::min(lo, static_cast<double>(run.servers));
    hi = std::max(hi, static_cast<double>(run.servers));
  }
  return {lo, hi};
}

format::CaptionedPlot PeakPowerPlot(const sim::CapacityPlan& plan) {
  format::Plot plot{.name = "peak-power",
                    .title = "Peak row power against servers, per policy",
                    .x_label = "servers in the row",
                    .y_label = "peak row power (% of budget)"};
  plot.series = PerPolicy(plan, false, [](const sim::RunSummary& r) -> std::optional<double> {
    return r.peak_frac * 100;
  });
  const auto [lo, hi] = ServerRange(plan);
  plot.series.push_back(Level("budget", 100, lo, hi));
  return {std::move(plot),
          "The highest metered 1 s row power of every simulation the search ran on the first "
          "planning week. Runs that broke the power SLO stopped at their first event, so their "
          "peak is where they stopped."};
}

// The share of weeks with a power event against servers, per policy: of the unseen weeks, with
// the bounds on the weekly risk as error bars; without unseen weeks, of every week run.
format::CaptionedPlot RiskPlot(const sim::CapacityPlan& plan) {
  format::Plot plot{.name = "risk",
                    .title = "Weekly risk of a brake or time over budget, against servers",
                    .x_label = "servers in the row",
                    .y_label = "weeks with a power event (%)",
                    .y_min = 0.0};
  const bool unseen = plan.validation_weeks > 0;
  std::map<std::string, format::Series> by_policy;
  for (const sim::CountRisk& c : sim::PlanRisk(plan)) {
    if (unseen && c.unseen_weeks == 0) continue;
    format::Series& s = by_policy[c.policy];
    if (s.label.empty()) s.label = c.policy;
    if (!unseen) {
      s.points.emplace_back(c.servers, 100.0 * c.weeks_with_power_event / c.weeks);
      continue;
    }
    s.points.emplace_back(c.servers, 100.0 * c.unseen_weeks_with_power_event / c.unseen_weeks);
    s.y_ranges.emplace_back(c.unseen_risk_lower * 100, c.unseen_risk_upper * 100);
  }
  for (const sim::PolicyPlan& p : plan.policies) {
    if (by_policy.count(p.policy)) plot.series.push_back(std::move(by_policy[p.policy]));
  }
  if (unseen) {
    const auto [lo, hi] = ServerRange(plan);
    plot.series.push_back(Level(fmt::format("target ({:g}%)", plan.max_weekly_risk * 100),
                                plan.max_weekly_risk * 100, lo, hi));
    return {std::move(plot),
            fmt::format("Of the {} unseen weeks (seeds the search never used), the share in "
                        "which the row braked or went over its budget, at each count judged. "
                        "The bars are the weekly risk's bounds, each one-sided at {:g}% "
                        "confidence (Clopper-Pearson): a count fits when the top of its bar is "
                        "at or below the target. With no event in n weeks the top is 1 - "
                        "{:g}^(1/n): about 3/n.",
                        plan.validation_weeks, plan.confidence * 100, 1 - plan.confidence)};
  }
  return {std::move(plot),
          fmt::format("Of the {} planning weeks and stress cases the plan simulated at each "
                      "count (no unseen weeks: no bound on the risk), the share in which the row "
                      "braked or went over its budget. A count the plan did not simulate has no "
                      "point.",
                      sim::SearchedWeeks(plan))};
}

// Per policy, the distribution over the unseen weeks at its answer of the smallest margin
// between row power and the budget (the budget less the week's peak): what a week's brake is
// a tail of.
std::optional<format::CaptionedPlot> MarginPlot(const sim::CapacityPlan& plan) {
  format::Plot plot{.name = "weeks-margin",
                    .title = "Smallest margin to the budget over the unseen weeks, at each answer",
                    .x_label = "smallest margin to the budget in the week (kW; below 0: over)",
                    .y_label = "unseen weeks with at most this margin (%)",
                    .y_min = 0.0};
  for (const sim::PolicyPlan& p : plan.policies) {
    std::vector<double> margins;
    for (const sim::RunSummary& r : plan.runs) {
      if (r.policy != p.policy || r.servers != p.max_servers || r.week < sim::SearchedWeeks(plan))
        continue;
      margins.push_back(r.budget_w * (1 - r.peak_frac) / 1e3);
    }
    if (margins.empty()) continue;
    std::sort(margins.begin(), margins.end());
    format::Series s{.label = fmt::format("{} at {}", p.policy, p.max_servers)};
    for (std::size_t i = 0; i < margins.size(); ++i) {
      s.points.emplace_back(
          margins[i], 100.0 * static_cast<double>(i + 1) / static_cast<double>(margins.size()));
    }
    plot.series.push_back(std::move(s));
  }
  if (plot.series.empty()) return std::nullopt;
  return format::CaptionedPlot{
      std::move(plot),
      "For each policy at its answer, every unseen week's smallest margin between the metered "
      "1 s row power and the budget (the budget less the week's peak), sorted: the share of weeks "
      "whose margin was at most x. A week judged from its windows has the peak of its windows; a "
      "week stopped at its first power event, the peak it had reached (margin at or below 0)."};
}

struct LatencyMetric {
  const char* name;   // plot stem
  const char* label;  // "HP P50"
  double sim::Impact::*field;
  double bound_pct;
};

std::optional<format::CaptionedPlot> LatencyPlot(const sim::CapacityPlan& plan,
                                                 const LatencyMetric& m) {
  std::map<int, const sim::RunSummary*> baseline;
  for (const sim::RunSummary& r : plan.runs) {
    if (r.policy == policy::kUncappedPolicy && r.week == 0) baseline[r.servers] = &r;
  }
  format::Plot plot{
      .name = m.name,
      .title = fmt::format("{} end-to-end latency against servers, per policy", m.label),
      .x_label = "servers in the row",
      .y_label = fmt::format("{} change vs uncapped (%)", m.label)};
  plot.series = PerPolicy(plan, true, [&](const sim::RunSummary& r) -> std::optional<double> {
    const auto base = baseline.find(r.servers);
    if (r.stopped_early || base == baseline.end()) return std::nullopt;
    return sim::Compare(r, *base->second).*m.field;
  });
  bool any = false;
  for (const format::Series& s : plot.series) any = any || !s.points.empty();
  if (!any) return std::nullopt;
  const auto [lo, hi] = ServerRange(plan);
  plot.series.push_back(Level(fmt::format("SLO (+{}%)", m.bound_pct), m.bound_pct, lo, hi));
  return format::CaptionedPlot{
      std::move(plot),
      fmt::format("{} end-to-end latency of each capping policy's complete runs, as a change "
                  "from the uncapped row at the same server count (same per-server load). "
                  "Above the dashed line the SLO is broken.",
                  m.label)};
}

// How the capacity answer moves with the SLO: every latency bound scaled together (the brake
// bound stays), from the runs the search already has. No new simulation, so each point is a
// lower bound; the caption says so.
std::optional<format::CaptionedPlot> SloMarginPlot(const PlanReport& report) {
  constexpr double kFactors[] = {0.25, 0.5, 0.75, 1, 1.5, 2, 3, 4};
  const sim::Slo& slo = report.inputs.slo;
  format::Plot plot{
      .name = "slo-margin",
      .title = "Servers that fit against the SLO's latency bounds, per policy",
      .x_label = fmt::format("latency bounds, x the SLO's (HP P50 +{}%, HP P99 +{}%, LP "
                             "P50 +{}%)",
                             slo.hp_p50_e2e_pct, slo.hp_p99_e2e_pct, slo.lp_p50_e2e_pct),
      .y_label = "servers that fit (at least)"};
  bool any = false;
  for (const sim::PolicyPlan& pp : report.plan.policies) {
    format::Series series{.label = pp.policy};
    for (double f : kFactors) {
      sim::Slo scaled = slo;
      scaled.hp_p50_e2e_pct *= f;
      scaled.hp_p99_e2e_pct *= f;
      scaled.lp_p50_e2e_pct *= f;
      const int fits = sim::CapacityUnderSlo(report.plan, pp.policy, scaled).fits;
      if (fits > 0) series.points.emplace_back(f, fits);
    }
    any = any || !series.points.empty();
    plot.series.push_back(std::move(series));
  }
  if (!any) return std::nullopt;
  return format::CaptionedPlot{
      std::move(plot),
      "How much the answer depends on the SLO: for each policy, the most servers among the counts "
      "the search simulated that keep the SLO with its latency bounds scaled by the factor on the "
      "x axis (the brake bound unchanged; 1 is the plan's own SLO). It reuses the plan's "
      "simulations, so each point is a lower bound: the search did not simulate every count, and "
      "a count it skipped may fit too. A flat line is a policy limited by power, not latency."};
}

// Per kind of week (planning, stress, unseen), each week one policy ran at its answer as a
// point over the policy's position, spread a little sideways by kind so that the kinds do not
// hide one another: the distribution over weeks behind the policies table's worst case.
std::vector<format::Series> WeeksAtAnswerSeries(
    const sim::CapacityPlan& plan,
    const std::function<std::optional<double>(const WeekAtAnswer&)>& value) {
  constexpr double kSpread = 0.15;
  std::vector<format::Series> kinds{
      {.label = fmt::format("planning weeks ({})", plan.planning_weeks),
       .style = format::Style::kPoints},
      {.label = fmt::format("stress cases ({})", plan.stress_cases.size()),
       .style = format::Style::kPoints},
      {.label = fmt::format("unseen weeks ({})", plan.validation_weeks),
       .style = format::Style::kPoints}};
  for (std::size_t i = 0; i < plan.policies.size(); ++i) {
    for (const WeekAtAnswer& w : WeeksAtAnswer(plan, plan.policies[i])) {
      const int kind = w.run->week < plan.planning_weeks        ? 0
                       : w.run->week < sim::SearchedWeeks(plan) ? 1
                                                                : 2;
      if (std::optional<double> y = value(w)) {
        kinds[static_cast<std::size_t>(kind)].points.emplace_back(
            static_cast<double>(i) + (kind - 1) * kSpread, *y);
      }
    }
  }
  return kinds;
}

void PolicyTics(const sim::CapacityPlan& plan, format::Plot& plot) {
  for (std::size_t i = 0; i < plan.policies.size(); ++i) {
    plot.x_tics.emplace_back(static_cast<double>(i), fmt::format("{} ({})", plan.policies[i].policy,
                                                                 plan.policies[i].max_servers));
  }
  plot.rotate_x_tics = true;
  plot.pad_x = true;
}

format::CaptionedPlot WeeksPeakPlot(const sim::CapacityPlan& plan) {
  format::Plot plot{.name = "weeks-peak",
                    .title = "Peak row power of every week at each policy's answer",
                    .x_label = "policy (servers at its answer)",
                    .y_label = "peak row power (% of budget)"};
  PolicyTics(plan, plot);
  plot.series = WeeksAtAnswerSeries(
      plan, [](const WeekAtAnswer& w) -> std::optional<double> { return w.run->peak_frac * 100; });
  plot.series.push_back(
      Level("budget", 100, -0.5, static_cast<double>(plan.policies.size()) - 0.5));
  return {std::move(plot),
          "Each point is one week the plan simulated at a policy's answer: its highest metered "
          "1 s row power. The spread over weeks is the margin one week alone cannot show; a point "
          "near the dashed line is a week that came close to the brake."};
}

std::optional<format::CaptionedPlot> WeeksSloPlot(const sim::CapacityPlan& plan,
                                                  const sim::Slo& slo) {
  format::Plot plot{.name = "weeks-slo",
                    .title = "Latency change nearest its SLO bound, every week at each answer",
                    .x_label = "policy (servers at its answer)",
                    .y_label = "latency change, % of its SLO bound"};
  PolicyTics(plan, plot);
  // The change nearest its bound (the one that limits the row), as a share of that bound.
  plot.series = WeeksAtAnswerSeries(plan, [&](const WeekAtAnswer& w) -> std::optional<double> {
    if (!w.impact || w.run->stopped_early) return std::nullopt;
    double worst = -std::numeric_limits<double>::infinity();
    for (const auto& [change, bound] : {std::pair{w.impact->hp_p50_e2e_pct, slo.hp_p50_e2e_pct},
                                        std::pair{w.impact->hp_p99_e2e_pct, slo.hp_p99_e2e_pct},
                                        std::pair{w.impact->lp_p50_e2e_pct, slo.lp_p50_e2e_pct}}) {
      if (bound > 0) worst = std::max(worst, 100 * change / bound);
    }
    return std::isfinite(worst) ? std::optional<double>(worst) : std::nullopt;
  });
  bool any = false;
  for (const format::Series& s : plot.series) any = any || !s.points.empty();
  if (!any) return std::nullopt;
  plot.series.push_back(
      Level("SLO bound", 100, -0.5, static_cast<double>(plan.policies.size()) - 0.5));
  return format::CaptionedPlot{
      std::move(plot),
      fmt::format("Each point is one week at a capping policy's answer: of its HP P50, HP P99 "
                  "and LP P50 end-to-end latency changes against the uncapped row on the same "
                  "week, the one nearest its SLO bound (+{}%, +{}%, +{}%), as a share of that "
                  "bound. At 100% the SLO is exactly met; the uncapped row has no point.",
                  slo.hp_p50_e2e_pct, slo.hp_p99_e2e_pct, slo.lp_p50_e2e_pct)};
}

}  // namespace

std::vector<format::CaptionedPlot> PlanPlots(const PlanReport& report) {
  std::vector<format::CaptionedPlot> plots;
  plots.push_back(CapacityPlot(report));
  if (report.power) {
    plots.push_back(
        RowPowerPlot(*report.power, report.inputs.t1_frac, report.inputs.t2_frac,
                     "Metered row power of the chosen policy at its capacity, on the planning "
                     "week where it peaked highest, as the plan ran it"));
  }
  if (report.shed) {
    if (auto p = ShedPowerPlot(*report.shed)) plots.push_back(std::move(*p));
  }
  plots.push_back(PeakPowerPlot(report.plan));
  plots.push_back(RiskPlot(report.plan));
  const sim::Slo& slo = report.inputs.slo;
  for (const LatencyMetric& m :
       {LatencyMetric{"latency-hp-p50", "HP P50", &sim::Impact::hp_p50_e2e_pct, slo.hp_p50_e2e_pct},
        LatencyMetric{"latency-hp-p99", "HP P99", &sim::Impact::hp_p99_e2e_pct, slo.hp_p99_e2e_pct},
        LatencyMetric{"latency-lp-p50", "LP P50", &sim::Impact::lp_p50_e2e_pct,
                      slo.lp_p50_e2e_pct}}) {
    if (auto p = LatencyPlot(report.plan, m)) plots.push_back(std::move(*p));
  }
  if (auto p = SloMarginPlot(report)) plots.push_back(std::move(*p));
  plots.push_back(WeeksPeakPlot(report.plan));
  if (auto p = MarginPlot(report.plan)) plots.push_back(std::move(*p));
  if (auto p = WeeksSloPlot(report.plan, slo)) plots.push_back(std::move(*p));
  return plots;
}

}  // namespace headroom::report
