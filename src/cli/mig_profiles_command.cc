// `headroom mig show --profiles`: the GPU-instance profiles the driver lists (profile info and
// possible placements; read-only, MIG mode may be off) beside the MIG catalog's entry for each
// GPU's type, one row per profile with a verdict. A GPU whose type the catalog lacks still gets
// its driver table, every row a mismatch. Not thread-safe (CLI).
#include <iostream>
#include <vector>

#include "cli/commands.h"
#include "console/terminal.h"
#include "gpu/mig_view.h"
#include "report/mig_profiles_report.h"

namespace headroom::cli {

int RunMigProfileCheck(const GlobalOptions& global, const BackendOptions& backend, bool json) {
  core::SystemClock clock;
  auto set = app::OpenDevices(global.catalog_dir, backend, &clock);
  if (!set) return ReportError(set.error());
  const gpu::MigSpecLookup lookup = app::MigSpecLookupOf(global.catalog_dir);
  std::vector<gpu::GpuMigProfileCheck> checks;
  bool match = true;
  for (const auto& device : set->devices) {
    auto check = gpu::CheckDeviceMigProfiles(*device, lookup);
    if (!check) return ReportError(check.error());
    match = match && check->mismatches() == 0;
    if (!json) std::cout << report::MigProfileCheckText(*check, StdoutStyle());
    checks.push_back(std::move(*check));
  }
  if (json) {
    std::cout << report::MigProfileChecksJson(checks).dump(2) << "\n";
  } else {
    std::cout << report::MigProfileCheckSummary(checks);
  }
  return match ? kExitOk : kExitRuntime;
}

}  // namespace headroom::cli
