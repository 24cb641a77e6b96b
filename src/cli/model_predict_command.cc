// `headroom model predict`: time, power and energy of one inference batch of any catalogued model
// on any catalogued GPU, at a clock lock or under a power limit.
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "catalog/inference_fits.h"
#include "catalog/model_catalog.h"
#include "cli/commands.h"
#include "model/batch_prediction.h"
#include "model/inference_model.h"
#include "report/prediction_report.h"

namespace headroom::cli {
namespace {

struct PredictOptions {
  std::string model = "llama2-70b";
  std::string gpu = "a100-80gb-sxm";
  int tp = 8;
  int prompt = 1024;
  int batch = 1;
  int output = 128;
  int context = -1;  // -1: prompt + output / 2, the mean context over the generation
  double sm_clock = 0;
  double power_limit = 0;
  EngineOptions engine;
  bool json = false;
};

// The flags' checks that need the model and the GPU.
core::Status CheckQuery(const PredictOptions& o, const model::ModelSpec& spec,
                        const model::GpuSpec& g) {
  if (spec.heads % o.tp != 0) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--tp {}: must divide {}'s {} attention heads", o.tp, spec.name, spec.heads)));
  }
  if (o.sm_clock > 0 && o.power_limit > 0) {
    return core::Fail(core::Error::InvalidArgument("give --sm-clock or --power-limit, not both"));
  }
  if (o.sm_clock > 0 &&
      (o.sm_clock < g.sm_clock_min.value() || o.sm_clock > g.sm_clock_max.value())) {
    return core::Fail(core::Error::OutOfRange(
        fmt::format("--sm-clock {} MHz is outside {}'s range {}-{} MHz", o.sm_clock, g.name,
                    g.sm_clock_min.value(), g.sm_clock_max.value())));
  }
  if (o.power_limit > 0 &&
      (o.power_limit < g.power_limit_min.value() || o.power_limit > g.power_limit_max.value())) {
    return core::Fail(core::Error::OutOfRange(
        fmt::format("--power-limit {} W is outside {}'s settable range {}-{} W", o.power_limit,
                    g.name, g.power_limit_min.value(), g.power_limit_max.value())));
  }
  return core::Ok();
}

int RunPredict(const GlobalOptions& global, const PredictOptions& o) {
  auto hardware = app::LoadCatalog(global.catalog_dir);
  if (!hardware) return ReportError(hardware.error());
  auto gpu = hardware->Gpu(o.gpu);
  if (!gpu) return ReportError(gpu.error().WithContext("--gpu"));
  auto models = catalog::ModelCatalog::Embedded();
  if (!models) return ReportError(models.error());
  auto spec = models->Model(o.model);
  if (!spec) return ReportError(spec.error().WithContext("--model"));
  if (auto st = CheckQuery(o, **spec, **gpu); !st) return ReportError(st.error());
  auto engines = app::LoadEngines(o.engine, catalog::kDefaultEngine);
  if (!engines) return ReportError(engines.error());
  auto fits = engines->engines.Engine(engines->engine);
  if (!fits) return ReportError(fits.error());
  auto fit = (*fits)->For((*gpu)->name);
  if (!fit) return ReportError(fit.error().WithContext("--gpu"));

  const model::BatchQuery query{
      .tp = o.tp,
      .batch = o.batch,
      .prompt = o.prompt,
      .output = o.output,
      .context = o.context >= 0 ? std::optional<int>(o.context) : std::nullopt,
      .sm_clock = o.sm_clock > 0 ? std::optional(core::Megahertz(o.sm_clock)) : std::nullopt,
      .power_limit = o.power_limit > 0 ? std::optional(core::Watts(o.power_limit)) : std::nullopt};
  const model::InferenceModel m(**spec, model::GpuPowerModel(**gpu), fit->efficiency);
  const model::BatchPrediction prediction = model::PredictBatch(m, query);
  const report::PredictionContext context{.model = (*spec)->name,
                                          .gpu = (*gpu)->name,
                                          .engine = engines->engine,
                                          .engine_version = (*fits)->version(),
                                          .fitted_on = fit->fitted_on,
                                          .max_context = (*spec)->max_context};
  std::cout << (o.json ? report::PredictionJson(context, query, prediction).dump(2) + "\n"
                       : report::PredictionText(context, query, prediction));
  return kExitOk;
}

}  // namespace

void AddModelPredict(CLI::App* model, const GlobalOptions& global, RunFunction* run) {
  CLI::App* cmd = model->add_subcommand(
      "predict", "Predict prefill and decode time, power and energy of an inference batch");
  auto* o = OptionsRunBy(cmd, run, global, RunPredict);
  cmd->add_option("--model", o->model, "Model (data/models)")->capture_default_str();
  cmd->add_option("--gpu", o->gpu, "GPU type (catalog name or alias)")->capture_default_str();
  cmd->add_option("--tp", o->tp, "Tensor parallelism")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--prompt", o->prompt, "Prompt tokens per sequence")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--batch", o->batch, "Sequences in the batch")
      ->check(CLI::Range(1, 1 << 16))
      ->capture_default_str();
  cmd->add_option("--output", o->output, "Output tokens per sequence")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--context", o->context,
                  "KV-cache tokens per sequence at the decode step (default: prompt + output/2)")
      ->check(CLI::Range(0, 1 << 22));
  cmd->add_option("--sm-clock", o->sm_clock, "Lock the SM clock, MHz")->check(CLI::PositiveNumber);
  cmd->add_option("--power-limit", o->power_limit, "Power limit, W")->check(CLI::PositiveNumber);
  AddEngineOptions(cmd, &o->engine);
  cmd->add_flag("--json", o->json, "Print JSON");
}

}  // namespace headroom::cli
