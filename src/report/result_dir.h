// The result kinds, in one table: which command writes a result directory, the file only that
// command writes there (its marker), and the report rebuilt from the directory alone. The table
// drives `headroom report DIR`, each command's --report and the tests. Markers are looked for in
// the table's order: mig characterize's results.csv is not characterize's, so mig-characterize.json
// comes first. Thread-compatible.
#ifndef HEADROOM_REPORT_RESULT_DIR_H_
#define HEADROOM_REPORT_RESULT_DIR_H_

#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "format/html.h"

namespace headroom::report {

enum class ResultKind {
  kStudy,
  kPlan,
  kMigPlan,
  kMigCharacterize,
  kSimulate,
  kCharacterize,
  kMeasure
};

struct ResultKindInfo {
  ResultKind kind;
  const char* command;      // the command that writes it: "mig plan"
  const char* marker_file;  // the file only that command writes: "mig-plan.json"
  // DIR/report.html from what the command wrote; errors name the file and the field.
  core::Result<format::WrittenReport> (*write_report)(const std::string& dir);
};

// Every kind, in the order a directory is recognised.
const std::vector<ResultKindInfo>& ResultKinds();
const ResultKindInfo& InfoOf(ResultKind kind);

// The kind whose marker file DIR holds; nullopt for none.
std::optional<ResultKind> DetectResultKind(const std::string& dir);

// Writes DIR/report.html for whichever kind DIR holds: kNotFound when DIR is missing or holds
// no marker (the message lists them all).
[[nodiscard]] core::Result<format::WrittenReport> WriteResultReport(const std::string& dir);
// The same for a known kind (a command's --report after it wrote DIR).
[[nodiscard]] core::Result<format::WrittenReport> WriteResultReport(ResultKind kind,
                                                                    const std::string& dir);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_RESULT_DIR_H_
