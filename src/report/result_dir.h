// Which command wrote a result directory, told by the file only that command writes there
// (mig-plan.json: mig plan; mig-characterize.json: mig characterize, whose results.csv is not
// characterize's; requests.csv: simulate; results.csv: characterize; series.csv: measure), and
// its report rebuilt from the directory alone. The plan's directory (plan.json) is plan_html.h's.
// Thread-compatible.
#ifndef HEADROOM_REPORT_RESULT_DIR_H_
#define HEADROOM_REPORT_RESULT_DIR_H_

#include <string>

#include "core/result.h"
#include "report/html.h"

namespace headroom::report {

enum class ResultKind { kNone, kMigPlan, kMigCharacterize, kSimulate, kCharacterize, kMeasure };

ResultKind DetectResultKind(const std::string& dir);

// Writes DIR/report.html for a mig plan, mig characterize, simulate, characterize or measure
// directory; kNotFound when DIR is none of them.
[[nodiscard]] core::Result<WrittenReport> WriteResultReport(const std::string& dir);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_RESULT_DIR_H_
