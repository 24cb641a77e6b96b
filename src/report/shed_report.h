// Demand response at a plan's answers (sim/demand_response.h) as plan.json holds it, as `plan`
// prints it, and as its report draws it. Pure; thread-compatible.
#ifndef HEADROOM_REPORT_SHED_REPORT_H_
#define HEADROOM_REPORT_SHED_REPORT_H_

#include <string>
#include <tuple>
#include <vector>

#include "format/json_fields.h"
#include "format/text_style.h"
#include "sim/capacity_planner.h"
#include "sim/demand_response.h"
#include "sim/row_simulator.h"

namespace headroom::report {

inline constexpr auto kShedTrialFields =
    std::tuple{format::Field("week", &sim::ShedTrial::week),
               format::Field("shed", &sim::ShedTrial::shed),
               format::Field("start_s", &sim::ShedTrial::start_s),
               format::Field("budget_w", &sim::ShedTrial::budget_w),
               format::Field("held", &sim::ShedTrial::held),
               format::Field("why_not", &sim::ShedTrial::why_not),
               format::Field("complied_after_s", &sim::ShedTrial::complied_after_s),
               format::Field("comply_within_s", &sim::ShedTrial::comply_within_s),
               format::Field("over_after_deadline_s", &sim::ShedTrial::over_after_deadline_s),
               format::Field("peak_after_deadline_w", &sim::ShedTrial::peak_after_deadline_w),
               format::Field("brake_events", &sim::ShedTrial::brake_events),
               format::Field("power_before_w", &sim::ShedTrial::power_before_w),
               format::Field("mean_w", &sim::ShedTrial::mean_w),
               format::Field("uncapped_mean_w", &sim::ShedTrial::uncapped_mean_w),
               format::Field("energy_not_drawn_j", &sim::ShedTrial::energy_not_drawn_j),
               format::Field("hp_p50_e2e_change_pct", &sim::ShedTrial::hp_p50_pct),
               format::Field("hp_p99_e2e_change_pct", &sim::ShedTrial::hp_p99_pct),
               format::Field("lp_p50_e2e_change_pct", &sim::ShedTrial::lp_p50_pct),
               format::Field("lp_p99_e2e_change_pct", &sim::ShedTrial::lp_p99_pct)};

inline constexpr auto kPolicyShedFields =
    std::tuple{format::Field("policy", &sim::PolicyShed::policy),
               format::Field("servers", &sim::PolicyShed::servers),
               format::Field("holds", &sim::PolicyShed::holds),
               format::Field("why_not", &sim::PolicyShed::why_not),
               format::Field("weeks", &sim::PolicyShed::asked, kShedTrialFields),
               format::Field("largest_held", &sim::PolicyShed::largest_held),
               format::Field("weeks_at_largest", &sim::PolicyShed::at_largest, kShedTrialFields)};

inline constexpr auto kShedPowerFields =
    std::tuple{format::Field("start_s", &sim::PowerWindow::start_s),
               format::Field("mean_w", &sim::PowerWindow::mean_w),
               format::Field("max_w", &sim::PowerWindow::max_w)};

inline constexpr auto kShedPlanFields =
    std::tuple{format::Field("shed", &sim::ShedPlan::shed),
               format::Field("length_s", &sim::ShedPlan::length_s),
               format::Field("comply_within_s", &sim::ShedPlan::comply_within_s),
               format::Field("policies", &sim::ShedPlan::policies, kPolicyShedFields),
               format::Field("simulations", &sim::ShedPlan::simulations),
               format::Field("plotted_policy", &sim::ShedPlan::plotted_policy),
               format::Field("event_at_s", &sim::ShedPlan::event_at_s),
               format::Field("budget_w", &sim::ShedPlan::budget_w),
               format::Field("power", &sim::ShedPlan::power, kShedPowerFields),
               format::Field("uncapped_power", &sim::ShedPlan::uncapped_power, kShedPowerFields)};

// One trial's row of the text table and the report's: policy, servers, week, the event's start,
// kW before, during and uncapped, complied, over after the deadline, brakes, energy not drawn,
// HP P50, LP P50 and LP P99 E2E changes.
std::vector<std::string> ShedTrialCells(const sim::CapacityPlan& plan, const sim::PolicyShed& p,
                                        const sim::ShedTrial& t);

// What `plan --shed` prints after the plan: per policy and planning week, whether the asked shed
// held and what it cost, then the largest shed each policy holds.
std::string ShedPlanText(const sim::CapacityPlan& plan, const sim::ShedPlan& shed,
                         const format::TextStyle& style = format::TextStyle());

// "polca holds 25% for 3h within 60 s at 50 servers" or "polca cannot hold 25% ... at 50
// servers (planning week 1 (seed 1): ...); it holds at most 12%".
std::string ShedVerdict(const sim::ShedPlan& shed, const sim::PolicyShed& p);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_SHED_REPORT_H_
