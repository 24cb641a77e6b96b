// `headroom model dvfs`: characterize a simulated GPU type from the calibrated power model:
// prefill-like vs decode-like work across SM clocks and power limits, and how a power cap
// (reactive) and a clock lock (proactive) treat a prefill burst.
#include <iostream>

#include "app/model_dvfs.h"
#include "cli/commands.h"
#include "console/terminal.h"
#include "report/dvfs_report.h"

namespace headroom::cli {
namespace {

struct DvfsOptions {
  std::string gpu = "a100-80gb-sxm";
  std::string sm_clocks;     // empty: 60%..100% of the maximum clock
  std::string power_limits;  // empty: the settable range
  bool json = false;
};

int RunDvfs(const GlobalOptions& global, const DvfsOptions& options) {
  auto dvfs = app::ModelDvfs({.catalog_dir = global.catalog_dir,
                              .gpu = options.gpu,
                              .sm_clocks = options.sm_clocks,
                              .power_limits = options.power_limits});
  if (!dvfs) return ReportError(dvfs.error());
  const report::DvfsCharacterization& c = dvfs->characterization;
  std::cout << (options.json ? report::DvfsJson(c).dump(2) + "\n"
                             : report::DvfsText(c, StdoutStyle()));
  return kExitOk;
}

}  // namespace

void RegisterModel(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  CLI::App* model =
      app.add_subcommand("model", "Query the calibrated GPU power and performance model");
  model->require_subcommand(1);
  CLI::App* dvfs = model->add_subcommand(
      "dvfs", "Power, time and energy of prefill vs decode across SM clocks and power limits");
  auto* options = OptionsRunBy(dvfs, run, global, RunDvfs);
  dvfs->add_option("--gpu", options->gpu, "GPU type (catalog name or alias)")
      ->capture_default_str();
  dvfs->add_option("--sm-clocks", options->sm_clocks,
                   "Clocks to lock, MHz: START:STOP:STEP or a list (default 60-100% of max)");
  dvfs->add_option("--power-limits", options->power_limits,
                   "Power limits, W: START:STOP:STEP or a list (default: the settable range)");
  dvfs->add_flag("--json", options->json, "Print JSON instead of tables");
  AddModelFit(model, global, run);
  AddModelPredict(model, global, run);
  AddModelValidate(model, global, run);
}

}  // namespace headroom::cli
