// `headroom mig show --profiles`: the GPU-instance profiles the driver lists (profile info and
// possible placements; read-only, MIG mode may be off) beside the MIG catalog's entry for each
// GPU's type, one row per profile with a verdict. A GPU whose type the catalog lacks still gets
// its driver table, every row a mismatch. Not thread-safe (CLI).
#include <iostream>

#include "app/mig_profiles.h"
#include "cli/commands.h"
#include "console/terminal.h"
#include "report/mig_profiles_report.h"

namespace headroom::cli {

int RunMigProfileCheck(const GlobalOptions& global, const BackendOptions& backend, bool json) {
  auto checked = app::MigProfileCheck({.catalog_dir = global.catalog_dir,
                                       .backend = backend,
                                       .on_gpu = [json](const gpu::GpuMigProfileCheck& check) {
                                         if (!json)
                                           std::cout
                                               << report::MigProfileCheckText(check, StdoutStyle());
                                       }});
  if (!checked) return ReportError(checked.error());
  if (json) {
    std::cout << report::MigProfileChecksJson(checked->gpus).dump(2) << "\n";
  } else {
    std::cout << report::MigProfileCheckSummary(checked->gpus);
  }
  return checked->match ? kExitOk : kExitRuntime;
}

}  // namespace headroom::cli
