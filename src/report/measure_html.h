// The report of one `headroom measure` run as a self-contained HTML page (report.html): the
// energy and power summary first, the inputs, per-GPU and per-phase tables, and the plots
// inlined as <svg>: the GPUs' power over time with the phases the program marked coloured apart,
// and mean power per phase. Every figure is <figure class="plot" data-plot="NAME">.
// Thread-compatible.
#ifndef HEADROOM_REPORT_MEASURE_HTML_H_
#define HEADROOM_REPORT_MEASURE_HTML_H_

#include <string>
#include <vector>

#include "core/result.h"
#include "format/html.h"
#include "format/plot.h"
#include "report/measure_dir.h"

namespace headroom::report {

// Reads the directory `measure --out DIR` wrote and writes DIR/report.html (plots under
// DIR/plots/).
[[nodiscard]] core::Result<format::WrittenReport> WriteMeasureReport(const std::string& dir);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MEASURE_HTML_H_
