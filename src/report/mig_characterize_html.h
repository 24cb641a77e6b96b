// The MIG characterization as one self-contained HTML page (report.html): the question and the
// answer first, the inputs, the best layout per workload, every layout drawn as slots
// (report/mig_slots.h), plots of whole-GPU samples/s, J/sample and power per layout (gnuplot,
// inlined), and per workload the table of every layout's instances with both attribution
// methods. Every figure is <figure class="plot" data-plot="NAME">. Reads result structs and files
// it wrote itself; sweeps nothing. Thread-compatible.
#ifndef HEADROOM_REPORT_MIG_CHARACTERIZE_HTML_H_
#define HEADROOM_REPORT_MIG_CHARACTERIZE_HTML_H_

#include <string>
#include <vector>

#include "core/result.h"
#include "format/plot.h"
#include "report/mig_characterize_report.h"
#include "report/plan_html.h"

namespace headroom::report {

// Reads the directory (mig_characterize_report.h) and writes DIR/report.html, the plots' files
// under DIR/plots/.
[[nodiscard]] core::Result<format::WrittenReport> WriteMigCharacterizeReport(
    const std::string& dir);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MIG_CHARACTERIZE_HTML_H_
