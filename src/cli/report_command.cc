// `headroom report DIR`: (re)builds DIR/report.html from the files `headroom plan`, `simulate`,
// `characterize`, `measure`, `mig plan` or `mig characterize` wrote, without simulating or
// measuring.
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "console/terminal.h"
#include "report/result_dir.h"

namespace headroom::cli {
namespace {

int RunReport(const std::string& dir) {
  auto written = report::WriteResultReport(dir);
  if (!written) return ReportError(written.error());
  for (const std::string& warning : written->warnings) {
    PrintWarning(warning);
  }
  std::cout << fmt::format("report: {}\n", written->path);
  return kExitOk;
}

}  // namespace

void RegisterReport(CLI::App& app, const GlobalOptions& /*global*/, RunFunction* run) {
  auto* cmd = app.add_subcommand(
      "report",
      "Write DIR/report.html (self-contained HTML) from what `plan`, `simulate`, "
      "`characterize` or `measure` --out DIR wrote");
  cmd->add_option("DIR", *OptionsRunBy(cmd, run, RunReport),
                  "Directory written by `headroom plan|simulate|characterize|measure --out DIR`")
      ->required();
}

}  // namespace headroom::cli
