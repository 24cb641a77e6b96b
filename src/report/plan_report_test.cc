#include "report/plan_report.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "report/plan_plots.h"
#include "report/testing/sample_plan.h"
#include "sim/capacity_planner.h"

namespace headroom::report {
namespace {

using testing::SamplePlanReport;

TEST(PlanReportTest, ChosenPolicyFitsTheMostServersAndIsNeverNone) {
  PlanReport r = SamplePlanReport();
  ASSERT_NE(ChosenPolicy(r.plan), nullptr);
  EXPECT_EQ(ChosenPolicy(r.plan)->policy, "polca");
  r.plan.policies[1].max_servers = 0;
  EXPECT_EQ(ChosenPolicy(r.plan), nullptr);  // none fits 40, uniform 0
}

TEST(PlanReportTest, AnswerComesFromThePlan) {
  PlanReport r = SamplePlanReport();
  EXPECT_EQ(PlanQuestion(r.plan),
            "How many servers fit in the row's 260 kW power budget (provisioned for 40) while "
            "the latency SLO holds and the brake never engages?");
  // Without the answers' unseen weeks judged, no risk to state.
  EXPECT_EQ(PlanAnswer(r.plan, r.inputs.slo),
            "polca fits 49 servers, +22.5% over 40, LP P50 +4.1%, 0 brakes (uncapped: 40); safe "
            "on 1 planning week; weekly risk not bounded; none: 1 of 2 unseen weeks failed at 41 "
            "servers, first unseen week 1 (seed 1007): over budget 1 time");
  // The answer's unseen weeks (its power verdicts) and the uncapped row's at the same count.
  for (int week : {1, 2}) {
    r.plan.runs.push_back(testing::SampleRun("polca", 49, 1));
    r.plan.runs.back().week = week;
    r.plan.runs.push_back(testing::SampleRun("none", 49, 1));
    r.plan.runs.back().week = week;
    r.plan.runs.back().over_budget_episodes = week == 1 ? 2 : 0;
  }
  // LP P50 +4.1% of +5% is nearer its bound than HP P50 +0.5% of +1%.
  EXPECT_EQ(PlanAnswer(r.plan, r.inputs.slo),
            "polca fits 49 servers, +22.5% over 40, LP P50 +4.1%, 0 brakes (uncapped: 40); safe "
            "on 1 planning week; 0 power events in 2 unseen weeks, weekly risk at most 77.6% "
            "(95%); none at 49: 1 of 2 weeks with a power event (50.0%, at most 97.5%); none: 1 "
            "of 2 unseen weeks failed at 41 servers, first unseen week 1 (seed 1007): over "
            "budget 1 time");
  // A capping policy the unseen weeks lowered is named before the uncapped row.
  r.plan.policies[2].searched_servers = 41;
  r.plan.policies[2].validation_failure =
      "2 of 2 unseen weeks failed at 41 servers, first unseen "
      "week 1 (seed 1007): 1 brake event";
  EXPECT_NE(PlanAnswer(r.plan, r.inputs.slo).find("; uniform: 2 of 2 unseen weeks failed"),
            std::string::npos)
      << PlanAnswer(r.plan, r.inputs.slo);
  r.plan.validation_weeks = 0;  // the search's answer alone
  r.plan.policies[1].impact.hp_p50_e2e_pct = 0.9;
  r.plan.policies[1].max_servers = 44;
  r.plan.policies[1].extra_pct = 10;
  EXPECT_EQ(PlanAnswer(r.plan, r.inputs.slo),
            "polca fits 44 servers, +10.0% over 40, HP P50 +0.9%, 0 brakes (uncapped: 40); safe "
            "on 1 planning week; weekly risk not bounded (no unseen weeks)");
  r.plan.policies[1].max_servers = 0;
  EXPECT_EQ(PlanAnswer(r.plan, r.inputs.slo),
            "No capping policy keeps the SLO even at the provisioned 40 servers");
}

TEST(PlanReportTest, RiskCountsTheWeeksWithAPowerEventAtEachCount) {
  const PlanReport r = SamplePlanReport();
  std::map<std::pair<std::string, int>, sim::CountRisk> risk;
  for (const sim::CountRisk& c : sim::PlanRisk(r.plan)) risk[{c.policy, c.servers}] = c;
  // none at 41: one unseen week, over budget once; polca at 50 braked, at 49 did not.
  const sim::CountRisk& none41 = risk.at({"none", 41});
  EXPECT_EQ(none41.weeks, 1);
  EXPECT_EQ(none41.weeks_with_power_event, 1);
  // The bound comes from the unseen weeks alone: one of one had an event.
  EXPECT_EQ(none41.unseen_weeks, 1);
  EXPECT_EQ(none41.unseen_weeks_with_power_event, 1);
  EXPECT_DOUBLE_EQ(none41.unseen_risk_upper, 1.0);
  const sim::CountRisk& polca50 = risk.at({"polca", 50});
  EXPECT_EQ(polca50.weeks_with_power_event, 1);
  EXPECT_DOUBLE_EQ(polca50.worst_peak_frac, 1.0);  // the sample's peak: 2% a server
  EXPECT_DOUBLE_EQ(polca50.smallest_margin_w, 0);
  const sim::CountRisk& polca49 = risk.at({"polca", 49});
  EXPECT_EQ(polca49.weeks, 1);
  EXPECT_EQ(polca49.weeks_with_power_event, 0);
  EXPECT_EQ(polca49.unseen_weeks, 0);  // a planning week: no bound from it
  EXPECT_DOUBLE_EQ(polca49.unseen_risk_upper, 1.0);
  EXPECT_NEAR(polca49.smallest_margin_w, 260'000 * 0.02, 1e-6);
  EXPECT_DOUBLE_EQ(polca49.most_capped_fraction, 0.05);
  // Every run counted once, in the plan's policy order then by servers.
  std::size_t weeks = 0;
  for (const sim::CountRisk& c : sim::PlanRisk(r.plan)) weeks += static_cast<std::size_t>(c.weeks);
  EXPECT_EQ(weeks, r.plan.runs.size());
  EXPECT_EQ(sim::PlanRisk(r.plan).front().policy, "none");
  EXPECT_EQ(sim::PlanRisk(r.plan).back().policy, "uniform");
}

TEST(PlanReportTest, WeeksAtAnswerListEachWeekWithItsChangeAgainstTheSameWeek) {
  const PlanReport r = SamplePlanReport();
  const sim::PolicyPlan& polca = r.plan.policies[1];
  ASSERT_EQ(polca.policy, "polca");
  const std::vector<WeekAtAnswer> weeks = WeeksAtAnswer(r.plan, polca);
  ASSERT_EQ(weeks.size(), 1u);  // the sample ran polca at 49 on the planning week only
  EXPECT_EQ(weeks[0].week, "planning week 1 (seed 7)");
  EXPECT_EQ(weeks[0].run->servers, 49);
  ASSERT_TRUE(weeks[0].impact);
  EXPECT_NEAR(weeks[0].impact->lp_p50_e2e_pct, 0.9, 1e-9);  // latency factor 1.009 at 49
  // The uncapped row's answer (40) ran on the planning week; it has no change against itself.
  const std::vector<WeekAtAnswer> none = WeeksAtAnswer(r.plan, r.plan.policies[0]);
  ASSERT_EQ(none.size(), 1u);
  EXPECT_FALSE(none[0].impact);
  sim::PolicyPlan nothing = polca;
  nothing.max_servers = 0;
  EXPECT_TRUE(WeeksAtAnswer(r.plan, nothing).empty());
}

TEST(PlanReportTest, ReducePowerTraceKeepsMeanMaxAndBrakes) {
  sim::RowResult run;
  run.policy = "polca";
  run.servers = 3;
  run.budget_w = 1000;
  for (int i = 1; i <= 10; ++i) {
    run.power.push_back({.time_s = static_cast<double>(i), .row_w = 100.0 * i, .state = 0});
  }
  run.events.push_back({.at = std::chrono::seconds(7), .from = "t2", .to = "brake", .reason = ""});
  run.events.push_back({.at = std::chrono::seconds(9), .from = "brake", .to = "t2", .reason = ""});
  const PowerTrace t = ReducePowerTrace(run, 4);
  EXPECT_EQ(t.policy, "polca");
  EXPECT_EQ(t.servers, 3);
  EXPECT_DOUBLE_EQ(t.window_s, 3);
  ASSERT_EQ(t.windows.size(), 4u);  // 3 + 3 + 3 + 1 samples
  EXPECT_DOUBLE_EQ(t.windows[0].start_s, 0);
  EXPECT_DOUBLE_EQ(t.windows[0].mean_w, 200);
  EXPECT_DOUBLE_EQ(t.windows[0].max_w, 300);
  EXPECT_DOUBLE_EQ(t.windows[3].start_s, 9);
  EXPECT_DOUBLE_EQ(t.windows[3].max_w, 1000);
  EXPECT_EQ(t.brake_s, std::vector<double>{7});
}

TEST(PlanReportTest, PlotsCoverCapacityPowerAndEveryLatencyBound) {
  PlanReport r = SamplePlanReport();
  std::vector<std::string> names;
  for (const format::CaptionedPlot& p : PlanPlots(r)) {
    names.push_back(p.plot.name);
    EXPECT_FALSE(p.plot.x_label.empty()) << p.plot.name;
    EXPECT_FALSE(p.plot.y_label.empty()) << p.plot.name;
    EXPECT_FALSE(p.caption.empty()) << p.plot.name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"capacity", "row-power", "peak-power", "risk",
                                             "latency-hp-p50", "latency-hp-p99", "latency-lp-p50",
                                             "slo-margin", "weeks-peak", "weeks-slo"}));
  const format::Plot latency = PlanPlots(r)[4].plot;
  // Capping policies only, the run stopped at its brake left out, and the SLO line.
  ASSERT_EQ(latency.series.size(), 3u);
  EXPECT_EQ(latency.series[0].label, "polca");
  EXPECT_EQ(latency.series[0].points.size(), 3u);
  EXPECT_NEAR(latency.series[0].points[2].second, 0.9, 1e-9);  // 49 servers: +0.9%
  EXPECT_EQ(latency.series[1].label, "uniform");
  EXPECT_EQ(latency.series[2].label, "SLO (+1%)");

  r.power.reset();
  names.clear();
  for (const format::CaptionedPlot& p : PlanPlots(r)) names.push_back(p.plot.name);
  EXPECT_EQ(std::count(names.begin(), names.end(), "row-power"), 0);
}

TEST(PlanReportTest, WeeksPlotsShowEveryWeekAtEachAnswerByKind) {
  const PlanReport r = SamplePlanReport();
  std::map<std::string, format::Plot> plots;
  for (const format::CaptionedPlot& p : PlanPlots(r)) plots[p.plot.name] = p.plot;
  const format::Plot& peak = plots.at("weeks-peak");
  ASSERT_EQ(peak.series.size(), 4u);  // planning, stress, unseen, the budget
  EXPECT_EQ(peak.series[0].label, "planning weeks (1)");
  EXPECT_EQ(peak.series[2].label, "unseen weeks (2)");
  // none at 40 and polca at 49 ran on the planning week (uniform fits none): left of each
  // policy's tic.
  const std::vector<std::pair<double, double>> planning = {{-0.15, 80}, {0.85, 98}};
  ASSERT_EQ(peak.series[0].points.size(), planning.size());
  for (std::size_t i = 0; i < planning.size(); ++i) {
    EXPECT_NEAR(peak.series[0].points[i].first, planning[i].first, 1e-12);
    EXPECT_NEAR(peak.series[0].points[i].second, planning[i].second, 1e-9);
  }
  EXPECT_EQ(peak.x_tics[1].second, "polca (49)");
  // polca at 49: +0.9% on every latency; HP P50's bound (+1%) is the nearest: 90% of it. The
  // uncapped row has no change against itself.
  const format::Plot& slo = plots.at("weeks-slo");
  ASSERT_EQ(slo.series[0].points.size(), 1u);
  EXPECT_NEAR(slo.series[0].points[0].first, 0.85, 1e-12);
  EXPECT_NEAR(slo.series[0].points[0].second, 90, 1e-6);
  EXPECT_EQ(slo.series.back().label, "SLO bound");
}

// The sample's POLCA runs: 45, 48, 49 servers at +0.5, +0.8, +0.9% on every latency, 50 braked.
TEST(PlanReportTest, CapacityUnderAnotherSloComesFromThePlansRuns) {
  const PlanReport r = SamplePlanReport();
  sim::Slo slo = r.inputs.slo;  // HP P50 +1%
  sim::CapacityBounds b = sim::CapacityUnderSlo(r.plan, "polca", slo);
  EXPECT_EQ(b.fits, 49);
  EXPECT_EQ(b.fails, 50);  // the brake, whatever the latency bounds
  slo.hp_p50_e2e_pct = 0.75;
  b = sim::CapacityUnderSlo(r.plan, "polca", slo);
  EXPECT_EQ(b.fits, 45);
  EXPECT_EQ(b.fails, 48);
  slo.hp_p50_e2e_pct = 0.25;
  b = sim::CapacityUnderSlo(r.plan, "polca", slo);
  EXPECT_EQ(b.fits, 0);
  EXPECT_EQ(b.fails, 45);
  slo.hp_p50_e2e_pct = slo.hp_p99_e2e_pct = slo.lp_p50_e2e_pct = 10;
  EXPECT_EQ(sim::CapacityUnderSlo(r.plan, "uniform", slo).fits, 45);  // +8% everywhere
  EXPECT_EQ(sim::CapacityUnderSlo(r.plan, "no-such-policy", slo).fits, 0);
}

TEST(PlanReportTest, SloMarginPlotScalesEveryLatencyBound) {
  const PlanReport r = SamplePlanReport();
  std::optional<format::Plot> margin;
  for (const format::CaptionedPlot& p : PlanPlots(r)) {
    if (p.plot.name == "slo-margin") margin = p.plot;
  }
  ASSERT_TRUE(margin);
  ASSERT_EQ(margin->series.size(), 3u);  // none, polca, uniform
  const format::Series& polca = margin->series[1];
  EXPECT_EQ(polca.label, "polca");
  // x0.25 keeps no simulated count (left out); x0.5 and x0.75 keep 45; x1 and up 49.
  const std::vector<std::pair<double, double>> expected = {
      {0.5, 45}, {0.75, 45}, {1, 49}, {1.5, 49}, {2, 49}, {3, 49}, {4, 49}};
  EXPECT_EQ(polca.points, expected);
  EXPECT_TRUE(margin->series[2].points.empty());  // uniform's +8% is over even 4 x 1%
}

}  // namespace
}  // namespace headroom::report
