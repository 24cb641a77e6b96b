// `headroom model predict`: time, power and energy of one inference batch of any catalogued model
// on any catalogued GPU, at a clock lock or under a power limit.
#include <iostream>
#include <optional>

#include "app/model_predict.h"
#include "cli/commands.h"
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

int RunPredict(const GlobalOptions& global, const PredictOptions& o) {
  auto predicted = app::ModelPredict(
      {.catalog_dir = global.catalog_dir,
       .model = o.model,
       .gpu = o.gpu,
       .query = {.tp = o.tp,
                 .batch = o.batch,
                 .prompt = o.prompt,
                 .output = o.output,
                 .context = o.context >= 0 ? std::optional<int>(o.context) : std::nullopt,
                 .sm_clock =
                     o.sm_clock > 0 ? std::optional(core::Megahertz(o.sm_clock)) : std::nullopt,
                 .power_limit =
                     o.power_limit > 0 ? std::optional(core::Watts(o.power_limit)) : std::nullopt},
       .engine = o.engine});
  if (!predicted) return ReportError(predicted.error());
  const auto& [context, query, prediction] = *predicted;
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
