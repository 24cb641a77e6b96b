// The report of one `headroom simulate` run as a self-contained HTML page (report.html): the
// question and the answer first, the inputs, the summary tables, and the plots inlined as <svg>:
// row power against the budget over time (the plan's plot) and the latency CDFs per priority
// (end-to-end and time to first token), against the uncapped row when it was simulated too.
// Every figure is <figure class="plot" data-plot="NAME">. Thread-compatible.
#ifndef HEADROOM_REPORT_SIMULATE_HTML_H_
#define HEADROOM_REPORT_SIMULATE_HTML_H_

#include <string>
#include <vector>

#include "core/result.h"
#include "format/html.h"
#include "format/plot.h"
#include "report/simulate_dir.h"

namespace headroom::report {

// Reads the directory `simulate --out DIR` wrote (simulate_dir.h) and writes DIR/report.html,
// the plots' files under DIR/plots/.
[[nodiscard]] core::Result<format::WrittenReport> WriteSimulateReport(const std::string& dir);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_SIMULATE_HTML_H_
