// Which MIG report a directory holds, told by its files (mig-plan.json: `mig plan --report`;
// mig-characterize.json: `mig characterize --report`), and rebuilding its report.html for
// `headroom report DIR`. Thread-compatible.
#ifndef HEADROOM_REPORT_MIG_REPORT_DIR_H_
#define HEADROOM_REPORT_MIG_REPORT_DIR_H_

#include <string>

#include "core/result.h"
#include "report/plan_html.h"

namespace headroom::report {

// True when `dir` holds mig-plan.json or mig-characterize.json.
bool IsMigReportDir(const std::string& dir);

// Writes DIR/report.html from the MIG directory's files. REQUIRES: IsMigReportDir(dir).
[[nodiscard]] core::Result<WrittenReport> WriteMigReport(const std::string& dir);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MIG_REPORT_DIR_H_
