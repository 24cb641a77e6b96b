// The report of a simulated `headroom characterize` sweep as a self-contained HTML page
// (report.html): the question and the answer first, the inputs, the settings against the
// default, prefill vs decode power (inference), and the plots inlined as <svg>: power and
// latency against the SM clock lock and against the power limit, energy per token against
// latency with the Pareto front, power over one run with its phases coloured, and per-phase
// power. Every figure is <figure class="plot" data-plot="NAME">. Thread-compatible.
#ifndef HEADROOM_REPORT_CHARACTERIZE_HTML_H_
#define HEADROOM_REPORT_CHARACTERIZE_HTML_H_

#include <string>
#include <vector>

#include "core/result.h"
#include "format/html.h"
#include "format/plot.h"
#include "report/characterize_dir.h"
#include "report/reductions.h"

namespace headroom::report {

// Reads the directory `characterize --out DIR` wrote and writes DIR/report.html (plots under
// DIR/plots/).
[[nodiscard]] core::Result<format::WrittenReport> WriteCharacterizeReport(const std::string& dir);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_CHARACTERIZE_HTML_H_
