// `headroom model validate`: the models against the measurements others published
// (data/validation/), on the rows no calibration was fitted on: catalog::ValidateBuiltInSuite.
#include <iostream>

#include "catalog/mig_catalog.h"
#include "catalog/model_catalog.h"
#include "catalog/served_runs.h"
#include "catalog/validation_sets.h"
#include "cli/commands.h"
#include "report/validation_report.h"
#include "sim/served_run_replay.h"

namespace headroom::cli {
namespace {

struct ValidateOptions {
  EngineOptions engine;  // --engine: only it; --engine-file: it as well as the built-in ones
  int worst = 3;
  bool json = false;
};

int RunValidate(const GlobalOptions& global, const ValidateOptions& o) {
  auto hardware = app::LoadCatalog(global.catalog_dir);
  if (!hardware) return ReportError(hardware.error());
  auto models = catalog::ModelCatalog::Embedded();
  if (!models) return ReportError(models.error());
  auto engines = app::LoadEngines(o.engine, catalog::kDefaultEngine);
  if (!engines) return ReportError(engines.error());
  auto mig = catalog::MigCatalog::Embedded();
  if (!mig) return ReportError(mig.error());
  const catalog::ValidationCatalogs catalogs{&*hardware, &*models, &engines->engines};
  auto report = catalog::ValidateBuiltInSuite(catalogs, *mig, o.engine.engine, o.worst);
  if (!report) return ReportError(report.error());
  auto runs = catalog::EmbeddedServedRuns();
  if (!runs) return ReportError(runs.error());
  sim::ScoreServedRunsInSimulator(catalogs, *runs, o.engine.engine, o.worst, &*report);
  std::cout << (o.json ? report::ValidationJson(*report).dump(2) + "\n"
                       : report::ValidationText(*report, StdoutStyle()));
  return kExitOk;
}

}  // namespace

void AddModelValidate(CLI::App* model, const GlobalOptions& global, RunFunction* run) {
  CLI::App* cmd = model->add_subcommand(
      "validate",
      "Check the models against published measurements (data/validation/): latency, power, energy "
      "and time per token per engine, training throughput, MIG slice scaling");
  auto* o = OptionsRunBy(cmd, run, global, RunValidate);
  AddEngineOptions(cmd, &o->engine);
  cmd->add_option("--worst", o->worst, "Worst rows to list per data set and metric")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "Print JSON");
}

}  // namespace headroom::cli
