// `headroom model fit`: fits the inference model's efficiency parameters per GPU type on a
// measured latency profile, reports MAPE on training and held-out points, and can write the
// parameters the product ships (data/fits/inference-efficiency.yaml).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "catalog/inference_fits.h"
#include "catalog/model_catalog.h"
#include "catalog/perf_profile.h"
#include "cli/commands.h"
#include "console/terminal.h"
#include "core/files.h"
#include "model/inference_fit.h"
#include "report/model_fit_report.h"

namespace headroom::cli {
namespace {

struct FitOptions {
  std::string profile;  // empty: the built-in llama2-70b profile
  std::string model = "llama2-70b";
  std::string write;
  bool json = false;
  bool points = false;
};

int RunFit(const GlobalOptions& global, const FitOptions& options) {
  auto hardware = LoadCatalog(global);
  if (!hardware) return ReportError(hardware.error());
  auto models = catalog::ModelCatalog::Embedded();
  if (!models) return ReportError(models.error());
  auto spec = models->Model(options.model);
  if (!spec) return ReportError(spec.error().WithContext("--model"));
  auto points = options.profile.empty() ? catalog::EmbeddedPerfProfile(options.model)
                                        : catalog::LoadPerfProfile(options.profile, options.model);
  if (!points) return ReportError(points.error());
  const std::string profile_name =
      options.profile.empty() ? "data/profiles/perf_model_llama2-70b.csv" : options.profile;
  auto fit = model::FitProfile(
      **spec, *points, [&hardware](const std::string& name) { return hardware->Gpu(name); });
  if (!fit) return ReportError(fit.error());
  if (options.points && !options.json) {
    std::cout << report::ModelFitPointsText(*fit, **spec, StdoutStyle());
  }
  if (!options.write.empty()) {
    if (auto st = core::WriteFileAtomically(
            options.write, catalog::InferenceFitsYaml(*fit, profile_name, options.model));
        !st) {
      return ReportError(st.error());
    }
  }
  if (options.json) {
    std::cout << report::ModelFitJson(*fit, profile_name, options.model).dump(2) << "\n";
    return kExitOk;
  }
  std::cout << report::ModelFitText(*fit, profile_name, options.model, StdoutStyle());
  if (!options.write.empty()) PrintNoteOut("Wrote " + options.write + "\n");
  return kExitOk;
}

}  // namespace

void AddModelFit(CLI::App* model, const GlobalOptions& global, RunFunction* run) {
  CLI::App* cmd = model->add_subcommand(
      "fit", "Fit the inference model's per-GPU efficiencies on a measured latency profile");
  auto* options = OptionsRunBy(cmd, run, global, RunFit);
  cmd->add_option("--profile", options->profile,
                  "SplitwiseSim-format CSV (default: the built-in llama2-70b profile)");
  cmd->add_option("--model", options->model, "Model whose rows to fit")->capture_default_str();
  cmd->add_option("--write", options->write,
                  "Write the fitted parameters as YAML (data/fits/inference-efficiency.yaml)");
  cmd->add_flag("--json", options->json, "Print JSON");
  cmd->add_flag("--points", options->points, "Also list every point: measured vs model");
}

}  // namespace headroom::cli
