// The MIG plan as one self-contained HTML page (report.html): the question and the answer first,
// the inputs, the table of options (the plan, the baselines, any --layout), one line per job on
// why it runs where it does, and the figures: each option's layout drawn as slots (hand-built
// SVG, report/mig_slots.h), energy against makespan per option and the plan's timeline (gnuplot,
// inlined). Every figure is <figure class="plot" data-plot="NAME">. Reads result structs and
// files it wrote itself; plans nothing. Thread-compatible.
#ifndef HEADROOM_REPORT_MIG_PLAN_HTML_H_
#define HEADROOM_REPORT_MIG_PLAN_HTML_H_

#include <string>
#include <vector>

#include "core/result.h"
#include "format/plot.h"
#include "report/mig_plan_report.h"
#include "report/plan_html.h"

namespace headroom::report {

// Reads DIR/mig-plan.json (mig_plan_report.h) and writes DIR/report.html, the plots' files under
// DIR/plots/.
[[nodiscard]] core::Result<format::WrittenReport> WriteMigPlanReport(const std::string& dir);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MIG_PLAN_HTML_H_
