#include "report/result_dir.h"

#include <filesystem>

#include <fmt/format.h>

#include "report/characterize_dir.h"
#include "report/characterize_html.h"
#include "report/measure_dir.h"
#include "report/measure_html.h"
#include "report/mig_characterize_html.h"
#include "report/mig_plan_html.h"
#include "report/simulate_dir.h"
#include "report/simulate_html.h"

namespace headroom::report {

ResultKind DetectResultKind(const std::string& dir) {
  std::error_code ec;
  const auto has = [&](const char* file) {
    return std::filesystem::exists(fmt::format("{}/{}", dir, file), ec);
  };
  if (has(kMigPlanFile)) return ResultKind::kMigPlan;
  if (has(kMigCharacterizeFile)) return ResultKind::kMigCharacterize;
  if (has(kRequestsFile)) return ResultKind::kSimulate;
  if (has(kResultsFile)) return ResultKind::kCharacterize;
  if (has(kSeriesFile)) return ResultKind::kMeasure;
  return ResultKind::kNone;
}

core::Result<WrittenReport> WriteResultReport(const std::string& dir) {
  switch (DetectResultKind(dir)) {
    case ResultKind::kMigPlan:
      return WriteMigPlanReport(dir);
    case ResultKind::kMigCharacterize:
      return WriteMigCharacterizeReport(dir);
    case ResultKind::kSimulate:
      return WriteSimulateReport(dir);
    case ResultKind::kCharacterize:
      return WriteCharacterizeReport(dir);
    case ResultKind::kMeasure:
      return WriteMeasureReport(dir);
    case ResultKind::kNone:
      break;
  }
  return core::Fail(core::Error::NotFound(fmt::format(
      "{}: holds none of {}, {}, {}, {} or {} (the files mig plan, mig characterize, simulate, "
      "characterize and measure write)",
      dir, kMigPlanFile, kMigCharacterizeFile, kRequestsFile, kResultsFile, kSeriesFile)));
}

}  // namespace headroom::report
