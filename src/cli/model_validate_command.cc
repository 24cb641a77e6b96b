// `headroom model validate`: the models against the measurements others published
// (data/validation/), on the rows no calibration was fitted on: app::ModelValidate.
#include <iostream>

#include "app/model_validate.h"
#include "cli/commands.h"
#include "report/validation_report.h"

namespace headroom::cli {
namespace {

struct ValidateOptions {
  EngineOptions engine;  // --engine: only it; --engine-file: it as well as the built-in ones
  int worst = 3;
  bool json = false;
};

int RunValidate(const GlobalOptions& global, const ValidateOptions& o) {
  auto report =
      app::ModelValidate({.catalog_dir = global.catalog_dir, .engine = o.engine, .worst = o.worst});
  if (!report) return ReportError(report.error());
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
