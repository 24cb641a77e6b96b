#include "report/result_dir.h"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/check.h"
#include "report/characterize_dir.h"
#include "report/characterize_html.h"
#include "report/measure_dir.h"
#include "report/measure_html.h"
#include "report/mig_characterize_html.h"
#include "report/mig_characterize_report.h"
#include "report/mig_plan_html.h"
#include "report/mig_plan_report.h"
#include "report/plan_dir.h"
#include "report/plan_html.h"
#include "report/simulate_dir.h"
#include "report/simulate_html.h"
#include "report/study_report.h"

namespace headroom::report {

const std::vector<ResultKindInfo>& ResultKinds() {
  static const auto* kinds = new std::vector<ResultKindInfo>{
      {ResultKind::kStudy, "study", kStudyFile, &WriteStudyReport},
      {ResultKind::kPlan, "plan", kPlanFile, &WritePlanReport},
      {ResultKind::kMigPlan, "mig plan", kMigPlanFile, &WriteMigPlanReport},
      {ResultKind::kMigCharacterize, "mig characterize", kMigCharacterizeFile,
       &WriteMigCharacterizeReport},
      {ResultKind::kSimulate, "simulate", kRequestsFile, &WriteSimulateReport},
      {ResultKind::kCharacterize, "characterize", kResultsFile, &WriteCharacterizeReport},
      {ResultKind::kMeasure, "measure", kSeriesFile, &WriteMeasureReport},
  };
  return *kinds;
}

const ResultKindInfo& InfoOf(ResultKind kind) {
  for (const ResultKindInfo& info : ResultKinds()) {
    if (info.kind == kind) return info;
  }
  HEADROOM_CHECK(false) << "result kind " << static_cast<int>(kind) << " is not in the table";
  return ResultKinds().front();
}

std::optional<ResultKind> DetectResultKind(const std::string& dir) {
  for (const ResultKindInfo& info : ResultKinds()) {
    std::error_code ec;
    if (std::filesystem::exists(fmt::format("{}/{}", dir, info.marker_file), ec)) {
      return info.kind;
    }
  }
  return std::nullopt;
}

core::Result<format::WrittenReport> WriteResultReport(ResultKind kind, const std::string& dir) {
  return InfoOf(kind).write_report(dir);
}

core::Result<format::WrittenReport> WriteResultReport(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return core::Fail(core::Error::NotFound(fmt::format("{}: no such directory", dir)));
  }
  if (const std::optional<ResultKind> kind = DetectResultKind(dir)) {
    return WriteResultReport(*kind, dir);
  }
  std::vector<std::string> markers, commands;
  for (const ResultKindInfo& info : ResultKinds()) {
    markers.emplace_back(info.marker_file);
    commands.emplace_back(info.command);
  }
  return core::Fail(
      core::Error::NotFound(fmt::format("{}: holds none of {} (the files {} write)", dir,
                                        fmt::join(markers, ", "), fmt::join(commands, ", "))));
}

}  // namespace headroom::report
