#include "report/shed_report.h"

#include <fmt/format.h>

#include "core/parse.h"
#include "format/table.h"
#include "report/simulation_report.h"

namespace headroom::report {
namespace {

std::string Duration(double seconds) {
  return core::FormatDuration(std::chrono::round<std::chrono::seconds>(core::FromSeconds(seconds)));
}

std::string Complied(const sim::ShedTrial& t) {
  return t.complied_after_s ? fmt::format("{:.0f} s", *t.complied_after_s) : std::string("never");
}

// The worst change of each class's latency over a policy's weeks at one shed.
std::string WorstLatency(const std::vector<sim::ShedTrial>& trials) {
  double hp = 0;
  double lp = 0;
  for (const sim::ShedTrial& t : trials) {
    hp = std::max({hp, t.hp_p50_pct, t.hp_p99_pct});
    lp = std::max({lp, t.lp_p50_pct, t.lp_p99_pct});
  }
  return fmt::format("HP E2E up to {:+.1f}%, LP up to {:+.1f}% (P50 and P99)", hp, lp);
}

}  // namespace

std::string ShedVerdict(const sim::ShedPlan& shed, const sim::PolicyShed& p) {
  const std::string asked = fmt::format("{:.0f}% for {} within {:.0f} s", shed.shed * 100,
                                        Duration(shed.length_s), shed.comply_within_s);
  if (p.holds) {
    return fmt::format("{} at {} servers holds {}, {}; at most {:.0f}%", p.policy, p.servers, asked,
                       WorstLatency(p.asked), p.largest_held);
  }
  const std::string largest =
      p.largest_held > 0
          ? fmt::format("it holds at most {:.0f}% ({})", p.largest_held, WorstLatency(p.at_largest))
          : std::string("it holds not even 1%");
  return fmt::format("{} at {} servers cannot hold {}: {}; {}", p.policy, p.servers, asked,
                     p.why_not, largest);
}

std::vector<std::string> ShedTrialCells(const sim::CapacityPlan& plan, const sim::PolicyShed& p,
                                        const sim::ShedTrial& t) {
  return {p.policy,
          std::to_string(p.servers),
          sim::WeekName(plan, t.week),
          DayAndTime(t.start_s),
          fmt::format("{:.1f}", t.power_before_w / 1e3),
          fmt::format("{:.1f}", t.mean_w / 1e3),
          fmt::format("{:.1f}", t.uncapped_mean_w / 1e3),
          Complied(t),
          fmt::format("{:.0f} s", t.over_after_deadline_s),
          std::to_string(t.brake_events),
          fmt::format("{:.0f} kWh", t.energy_not_drawn_j / 3.6e6),
          fmt::format("{:+.1f}%", t.hp_p50_pct),
          fmt::format("{:+.1f}%", t.lp_p50_pct),
          fmt::format("{:+.1f}%", t.lp_p99_pct)};
}

std::string ShedPlanText(const sim::CapacityPlan& plan, const sim::ShedPlan& shed,
                         const format::TextStyle& style) {
  format::TextTable table({{"POLICY", format::TextTable::Align::kLeft},
                           {"SERVERS"},
                           {"WEEK", format::TextTable::Align::kLeft},
                           {"EVENT AT"},
                           {"kW BEFORE"},
                           {"kW DURING"},
                           {"UNCAPPED"},
                           {"COMPLIED"},
                           {"OVER AFTER"},
                           {"BRAKES"},
                           {"NOT DRAWN"},
                           {"HP P50"},
                           {"LP P50"},
                           {"LP P99"},
                           {"HELD", format::TextTable::Align::kLeft}});
  for (const sim::PolicyShed& p : shed.policies) {
    for (const sim::ShedTrial& t : p.asked) {
      std::vector<std::string> cells = ShedTrialCells(plan, p, t);
      cells.push_back(t.held ? "yes" : "no");
      table.AddRow(cells);
    }
  }
  const double budget_kw = shed.budget_w / 1e3;
  std::string out =
      "\n" +
      style.Bold(fmt::format("Demand response: shed {:.0f}% of {:.0f} kW (to {:.1f} kW) within "
                             "{:.0f} s and hold it for {}, at each planning week's peak",
                             shed.shed * 100, budget_kw, budget_kw * (1 - shed.shed),
                             shed.comply_within_s, Duration(shed.length_s))) +
      "\n";
  out += table.Render(style);
  out +=
      "(EVENT AT: its start in the week; latency of the requests that arrived during it and "
      "energy not drawn against the uncapped row over the same hours)\n";
  for (const sim::PolicyShed& p : shed.policies) out += ShedVerdict(shed, p) + "\n";
  out += fmt::format("{} simulations of the event\n", shed.simulations);
  return out;
}

}  // namespace headroom::report
