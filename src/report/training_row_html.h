// The report of a training row (report.html): the question and the answer, the inputs, the
// table per mitigation, and three plots inlined as <svg>: the row's power through a few
// iterations and through the first checkpoint under every mitigation, and the swing spectrum
// with the grid's two bands marked. Built from the verdict in memory: `headroom report DIR` does
// not rebuild it yet. Thread-compatible.
#ifndef HEADROOM_REPORT_TRAINING_ROW_HTML_H_
#define HEADROOM_REPORT_TRAINING_ROW_HTML_H_

#include <string>

#include "core/result.h"
#include "format/html.h"
#include "sim/training_verdict.h"

namespace headroom::report {

[[nodiscard]] core::Result<format::WrittenReport> WriteTrainingRowReport(
    const std::string& dir, const sim::TrainingRowVerdict& v, const std::string& version);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_TRAINING_ROW_HTML_H_
