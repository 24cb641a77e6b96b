// The plots of a capacity plan's report, as data (report/plot.h draws them): servers per policy,
// row power against the budget over time for the chosen policy at its capacity, peak power, the
// share of weeks with a power event and the SLO's latency changes against the server count per
// policy. Pure; thread-compatible.
#ifndef HEADROOM_REPORT_PLAN_PLOTS_H_
#define HEADROOM_REPORT_PLAN_PLOTS_H_

#include <optional>
#include <string>
#include <vector>

#include "format/plot.h"
#include "report/plan_report.h"

namespace headroom::report {

// Plots with no data are left out: the row power plot without a power trace, a latency plot
// when no capping policy has a complete run.
std::vector<format::CaptionedPlot> PlanPlots(const PlanReport& report);

// Row power (kW) over time, mean and highest sample per window, against the budget and the
// T1/T2 thresholds (fractions of the budget), brake engagements marked; the plan's chosen policy
// at its capacity, or the run of `headroom simulate`. `what` opens the caption.
format::CaptionedPlot RowPowerPlot(const PowerTrace& power, double t1_frac, double t2_frac,
                                   const std::string& what);

// Row power through the plan's demand-response event (plan --shed): the chosen policy's and the
// uncapped row's, against the budget in force; nullopt when the plan kept none.
std::optional<format::CaptionedPlot> ShedPowerPlot(const sim::ShedPlan& shed);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_PLAN_PLOTS_H_
