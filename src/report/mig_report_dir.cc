#include "report/mig_report_dir.h"

#include <filesystem>

#include "report/mig_characterize_html.h"
#include "report/mig_plan_html.h"

namespace headroom::report {
namespace {

bool Holds(const std::string& dir, const char* file) {
  std::error_code ec;
  return std::filesystem::exists(dir + "/" + file, ec);
}

}  // namespace

bool IsMigReportDir(const std::string& dir) {
  return Holds(dir, kMigPlanFile) || Holds(dir, kMigCharacterizeFile);
}

core::Result<WrittenReport> WriteMigReport(const std::string& dir) {
  return Holds(dir, kMigPlanFile) ? WriteMigPlanReport(dir) : WriteMigCharacterizeReport(dir);
}

}  // namespace headroom::report
