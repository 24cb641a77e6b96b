// `headroom model fit`: fits a serving engine's calibration (the inference model's efficiency
// parameters per GPU type) on a measured latency profile (SplitwiseSim's, or a user's rows), or
// refits a built-in engine on its calibration rows of the validation suite (--engine); reports
// the error on the configurations held out, and can write the calibration (data/fits/).
#include <iostream>
#include <variant>

#include <fmt/format.h>

#include "app/model_fit.h"
#include "cli/commands.h"
#include "console/terminal.h"
#include "report/model_fit_report.h"
#include "report/validation_report.h"

namespace headroom::cli {
namespace {

struct FitOptions {
  std::string engine;  // refit this built-in engine on the validation suite
  std::string name = std::string(app::kProfileEngine);  // the engine it calibrates
  std::string profile;                                  // empty: the built-in llama2-70b profile
  std::string model = "llama2-70b";
  std::string write;
  bool json = false;
  bool points = false;
};

int PrintFit(const FitOptions& options, const app::EngineRefit& refit) {
  std::cout << (options.json ? report::ValidationJson(refit.validation).dump(2) + "\n"
                             : report::ValidationText(refit.validation, StdoutStyle()));
  if (!options.write.empty()) PrintNoteOut("Wrote " + options.write + "\n");
  return kExitOk;
}

int PrintFit(const FitOptions& options, const app::ProfileRowsFit& fit) {
  if (options.json) {
    std::cout << report::ProfileEngineFitJson(fit.errors, options.profile).dump(2) << "\n";
    return kExitOk;
  }
  std::cout << report::ProfileEngineFitText(fit.errors, options.profile, StdoutStyle());
  if (!options.write.empty()) {
    PrintNoteOut(
        fmt::format("Wrote {} (use it with --engine-file {})\n", options.write, options.write));
  }
  return kExitOk;
}

int PrintFit(const FitOptions& options, const app::PerfProfileFit& fit) {
  if (options.points && !options.json) {
    std::cout << report::ModelFitPointsText(fit.fit, fit.model, StdoutStyle());
  }
  if (options.json) {
    std::cout << report::ModelFitJson(fit.fit, fit.profile, options.model).dump(2) << "\n";
    return kExitOk;
  }
  std::cout << report::ModelFitText(fit.fit, fit.profile, options.model, StdoutStyle());
  if (!options.write.empty()) PrintNoteOut("Wrote " + options.write + "\n");
  return kExitOk;
}

int RunFit(const GlobalOptions& global, const FitOptions& options) {
  auto fit = app::ModelFit({.catalog_dir = global.catalog_dir,
                            .engine = options.engine,
                            .name = options.name,
                            .profile = options.profile,
                            .model = options.model,
                            .write = options.write});
  if (!fit) return ReportError(fit.error());
  return std::visit([&options](const auto& f) { return PrintFit(options, f); }, *fit);
}

}  // namespace

void AddModelFit(CLI::App* model, const GlobalOptions& global, RunFunction* run) {
  CLI::App* cmd = model->add_subcommand(
      "fit",
      "Fit a serving engine's calibration: on a measured profile (yours, or the built-in one), or "
      "a built-in engine on its rows of the validation suite");
  auto* options = OptionsRunBy(cmd, run, global, RunFit);
  auto* engine = cmd->add_option(
      "--engine", options->engine,
      "Refit a built-in engine (data/fits/) on its calibration rows of data/validation/");
  cmd->add_option("--profile", options->profile,
                  fmt::format("Your own profile: a CSV of {} rows, or SplitwiseSim's format "
                              "(default: the built-in llama2-70b profile)",
                              app::kProfileRowColumns))
      ->excludes(engine);
  cmd->add_option("--model", options->model, "Model whose rows to fit")->capture_default_str();
  cmd->add_option("--write", options->write,
                  "Write the fitted parameters as YAML (data/fits/splitwise-sim.yaml)");
  cmd->add_option("--name", options->name, "Engine name the written calibration carries")
      ->capture_default_str();
  cmd->add_flag("--json", options->json, "Print JSON");
  cmd->add_flag("--points", options->points, "Also list every point: measured vs model");
}

}  // namespace headroom::cli
