// The capacity plan as one self-contained HTML page (report.html): the question and the answer
// first, the inputs, the table of policies, and the plots of plan_plots.h inlined as <svg>
// (drawn by gnuplot). Every figure is <figure class="plot" data-plot="NAME">. Reads result
// structs and files it wrote itself; runs no simulation. Thread-compatible.
#ifndef HEADROOM_REPORT_PLAN_HTML_H_
#define HEADROOM_REPORT_PLAN_HTML_H_

#include <string>
#include <vector>

#include "core/result.h"
#include "format/html.h"
#include "report/plan_report.h"

namespace headroom::report {

// Reads the directory `plan --out DIR` wrote (plan_dir.h) and writes DIR/report.html, the plots'
// files under DIR/plots/. Errors name the file: a missing or invalid DIR, plan.json or
// row-power.csv.
[[nodiscard]] core::Result<format::WrittenReport> WritePlanReport(const std::string& dir);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_PLAN_HTML_H_
