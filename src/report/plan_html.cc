#include "report/plan_html.h"

#include <map>

#include <fmt/format.h>

#include "format/html.h"
#include "format/table.h"
#include "report/plan_dir.h"
#include "report/plan_plots.h"
#include "report/plan_report.h"
#include "report/shed_report.h"

namespace headroom::report {
namespace {

std::string Header(const PlanReport& r) {
  const sim::RunSummary& b = r.plan.baseline;
  return format::HtmlHeader(
      PlanQuestion(r.plan), PlanAnswer(r.plan, r.inputs.slo),
      fmt::format(
          "Scenario <b>{}</b>: {}. Uncapped, the provisioned row of {} servers "
          "peaks at {:.1f}% of its budget (mean {:.1f}%); end-to-end latency P50/P99 is {}/{} for "
          "high priority (HP) and {}/{} for low priority (LP). {} simulations.",
          format::HtmlEscape(r.inputs.scenario), format::HtmlEscape(r.inputs.description),
          r.plan.baseline_servers, b.peak_frac * 100, b.mean_frac * 100,
          format::FormatSeconds(b.hp.e2e_p50_s), format::FormatSeconds(b.hp.e2e_p99_s),
          format::FormatSeconds(b.lp.e2e_p50_s), format::FormatSeconds(b.lp.e2e_p99_s),
          r.plan.simulations));
}

std::string Inputs(const PlanInputs& in) {
  const sim::Slo& slo = in.slo;
  return format::HtmlInputs(
      {{"scenario", in.scenario},
       {"scenario file", in.scenario_source},
       {"trace", in.trace.empty() ? "the scenario's workload" : in.trace},
       {"serving engine", in.engine.empty() ? "not recorded" : in.engine},
       {"seed", std::to_string(in.seed)},
       {"policy overrides",
        in.overrides.empty() ? "none" : fmt::format("{}", fmt::join(in.overrides, ", "))},
       {"thresholds",
        fmt::format("T1 {:.0f}%, T2 {:.0f}% of the budget", in.t1_frac * 100, in.t2_frac * 100)},
       {"SLO", fmt::format("at most {} brakes; HP P50 within +{}%, HP P99 within +{}%, LP P50 "
                           "within +{}% of the uncapped row at the same per-server load",
                           slo.max_brake_events, slo.hp_p50_e2e_pct, slo.hp_p99_e2e_pct,
                           slo.lp_p50_e2e_pct)},
       {"headroom", in.version}});
}

std::string Policies(const sim::CapacityPlan& plan) {
  std::string out = "<section id=\"policies\">\n<h2>Policies</h2>\n<table class=\"policies\">\n" +
                    format::HtmlRow({"policy", "servers", "extra", "HP P50", "HP P99", "LP P50",
                                     "HP P50 E2E", "LP P50 E2E", "LP tok/s", "peak", "brakes",
                                     "capped", "unseen weeks", "next server fails on"},
                                    "th");
  const sim::PolicyPlan* chosen = sim::ChosenPolicy(plan);
  for (const sim::PolicyPlan& p : plan.policies) {
    if (p.max_servers == 0) {
      out += format::HtmlRow({p.policy, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-",
                              UnseenWeeks(plan, p), p.limit});
      continue;
    }
    const auto pct = [](double v) { return format::FormatChange(v / 100); };
    out += format::HtmlRow(
        {p.policy, std::to_string(p.max_servers), fmt::format("{:+.1f}%", p.extra_pct),
         pct(p.impact.hp_p50_e2e_pct), pct(p.impact.hp_p99_e2e_pct), pct(p.impact.lp_p50_e2e_pct),
         format::FormatSeconds(p.at_max.hp.e2e_p50_s), format::FormatSeconds(p.at_max.lp.e2e_p50_s),
         pct(p.impact.lp_throughput_pct), fmt::format("{:.1f}%", p.at_max.peak_frac * 100),
         std::to_string(p.at_max.brake_events),
         fmt::format("{:.1f}%", p.at_max.capped_server_fraction * 100), UnseenWeeks(plan, p),
         p.limit},
        "td", &p == chosen ? "chosen" : nullptr);
  }
  return out +
         "</table>\n<p class=\"note\">Latency and throughput changes are against the uncapped "
         "row at the same server count; peak is the highest 1 s row power as a share of the "
         "budget; capped is the share of server-time under a clock cap or power limit; unseen "
         "weeks: of the weeks the search never used, how many had a power event at the answer "
         "and the upper bound on a week's chance of one (\"was\": what the planning weeks alone "
         "allowed).</p>\n"
         "</section>\n";
}

// Every week each policy ran at its answer, so that a reader sees the spread behind the table's
// worst case: which week peaked highest, which came nearest a latency bound.
std::string Weeks(const sim::CapacityPlan& plan) {
  std::string out =
      "<section id=\"weeks\">\n<h2>Week by week at each answer</h2>\n"
      "<table class=\"weeks\">\n" +
      format::HtmlRow({"policy", "servers", "week", "peak", "brakes", "over budget", "capped",
                       "HP P50", "HP P99", "LP P50"},
                      "th");
  const auto pct = [](double v) { return format::FormatChange(v / 100); };
  for (const sim::PolicyPlan& p : plan.policies) {
    for (const WeekAtAnswer& w : WeeksAtAnswer(plan, p)) {
      const sim::RunSummary& r = *w.run;
      out += format::HtmlRow(
          {p.policy, std::to_string(r.servers), w.week, fmt::format("{:.1f}%", r.peak_frac * 100),
           std::to_string(r.brake_events), std::to_string(r.over_budget_episodes),
           fmt::format("{:.1f}%", r.capped_server_fraction * 100),
           w.impact ? pct(w.impact->hp_p50_e2e_pct) : "-",
           w.impact ? pct(w.impact->hp_p99_e2e_pct) : "-",
           w.impact ? pct(w.impact->lp_p50_e2e_pct) : "-"});
    }
  }
  return out +
         "</table>\n<p class=\"note\">Each week the plan simulated at a policy's answer: its "
         "planning weeks, stress cases and unseen weeks. Latency changes are against the "
         "uncapped row on the same week at the same servers; an unseen week is judged on its "
         "power alone (the peak of its hot windows, or of the whole week where it was run "
         "whole), without latencies.</p>\n</section>\n";
}

// "0/59 · 0.0–5.0% · 95.6% · 11.4 kW · 51%": of the unseen weeks where there are any, else of
// every week run.
std::string RiskCell(const sim::CountRisk& c) {
  if (c.unseen_weeks == 0) {
    return fmt::format("{}/{} · {:.1f}% · {:.1f} kW · {:.0f}%", c.weeks_with_power_event, c.weeks,
                       c.worst_peak_frac * 100, c.smallest_margin_w / 1e3,
                       c.most_capped_fraction * 100);
  }
  return fmt::format("{} · {:.1f}–{:.1f}% · {:.1f}% · {:.1f} kW · {:.0f}%", UnseenEvents(c),
                     c.unseen_risk_lower * 100, c.unseen_risk_upper * 100, c.worst_peak_frac * 100,
                     c.smallest_margin_w / 1e3, c.most_capped_fraction * 100);
}

// Per count, per policy: weeks with a power event of those judged, the bounds on the weekly
// risk, the worst peak, the smallest margin to the budget and the most server-time capped
// (sim::PlanRisk).
std::string Risk(const sim::CapacityPlan& plan) {
  const std::vector<sim::CountRisk> risk = sim::PlanRisk(plan);
  std::map<int, std::map<std::string, const sim::CountRisk*>> by_count;
  for (const sim::CountRisk& c : risk) by_count[c.servers][c.policy] = &c;
  std::vector<std::string> head{"servers"};
  for (const sim::PolicyPlan& p : plan.policies) head.push_back(p.policy);
  std::string out = "<section id=\"risk\">\n<h2>Risk at each count</h2>\n<table class=\"risk\">\n" +
                    format::HtmlRow(head, "th");
  for (const auto& [servers, policies] : by_count) {
    std::vector<std::string> row{std::to_string(servers)};
    for (const sim::PolicyPlan& p : plan.policies) {
      const auto it = policies.find(p.policy);
      if (it == policies.end()) {
        row.push_back("-");
        continue;
      }
      row.push_back(RiskCell(*it->second));
    }
    out += format::HtmlRow(row);
  }
  const std::string which =
      plan.validation_weeks > 0
          ? fmt::format(
                "the weeks are the {} unseen weeks (each its power verdict: the windows where "
                "the row nears its budget, simulated exactly; a week near the budget that the "
                "fit did not depend on stays a verdict, counted as an event for the upper bound "
                "and as none for the lower); the bounds on a week's chance of a power event are "
                "each one-sided at {:g}% confidence. Every count within {} of each policy's "
                "answer, and the chosen answer, is judged on every unseen week",
                plan.validation_weeks, plan.confidence * 100, plan.risk_beyond)
          : "no unseen weeks: the weeks are the planning weeks and stress cases the search ran "
            "at each count (a run stopped at its first power event counts with the peak it had "
            "reached), and no bound is stated";
  return out + fmt::format(
                   "</table>\n<p class=\"note\">Each cell: weeks with a brake or time over "
                   "budget of the weeks judged at that count (and, with unseen weeks, those near "
                   "the budget), the bounds on the weekly risk, the highest peak (% of the "
                   "budget), the smallest margin to the budget (negative: over it) and the most "
                   "server-time capped in one week. Here {}; '-': not judged.</p>\n</section>\n",
                   which);
}

std::string DemandResponse(const PlanReport& r) {
  if (!r.shed) return "";
  const sim::ShedPlan& shed = *r.shed;
  std::string out = fmt::format(
      "<section id=\"demand-response\">\n<h2>Demand response</h2>\n<p>Each policy at its "
      "answer, asked at each planning week's peak to shed {:.0f}% of its budget within {:.0f} s "
      "and hold it for {:.1f} h. It holds when the row is under the lowered budget for a minute "
      "within that time, stays under it, and never brakes.</p>\n<table>\n",
      shed.shed * 100, shed.comply_within_s, shed.length_s / 3600);
  out += format::HtmlRow(
      {"policy", "servers", "week", "event at", "kW before", "kW during", "uncapped kW", "complied",
       "over after", "brakes", "not drawn", "HP P50", "LP P50", "LP P99", "held"},
      "th");
  for (const sim::PolicyShed& p : shed.policies) {
    for (const sim::ShedTrial& t : p.asked) {
      std::vector<std::string> cells = ShedTrialCells(r.plan, p, t);
      cells.push_back(t.held ? "yes" : "no: " + t.why_not);
      out += format::HtmlRow(cells);
    }
  }
  out += "</table>\n<ul>\n";
  for (const sim::PolicyShed& p : shed.policies) {
    out += "<li>" + format::HtmlEscape(ShedVerdict(shed, p)) + "</li>\n";
  }
  return out + "</ul>\n</section>\n";
}

std::string Notes(const PlanReport& r) {
  std::string out =
      "<section id=\"notes\">\n<h2>Not shown</h2>\n<ul class=\"note\">\n<li>Latency "
      "distributions (CDFs): the plan keeps P50, P90 and P99 per run, not whole "
      "distributions; <code>headroom simulate --report</code> draws them for one run, against "
      "the uncapped row.</li>\n";
  if (!r.power) {
    out +=
        "<li>Row power over time: this plan's directory has no <code>row_power</code>; "
        "<code>headroom plan --out DIR</code> simulates the chosen policy at its capacity once "
        "more and keeps it.</li>\n";
  }
  return out + "</ul>\n</section>\n";
}

format::HtmlReport PlanReportHtml(const PlanReport& report, const std::string& plot_dir) {
  format::HtmlReport out;
  const std::string body = Header(report) + Inputs(report.inputs) + Policies(report.plan) +
                           format::HtmlPlots(PlanPlots(report), plot_dir, out.warnings) +
                           DemandResponse(report) + Weeks(report.plan) + Risk(report.plan) +
                           Notes(report) +
                           format::HtmlFooter(report.inputs.version, "headroom plan --out DIR");
  out.html = format::HtmlPage(fmt::format("headroom plan: {}", report.inputs.scenario), body);
  return out;
}

}  // namespace

core::Result<format::WrittenReport> WritePlanReport(const std::string& dir) {
  HEADROOM_ASSIGN_OR_RETURN(PlanReport report, ReadPlanDir(dir));
  return format::WriteReportPage(
      dir, [&](const std::string& plot_dir) { return PlanReportHtml(report, plot_dir); });
}

}  // namespace headroom::report
