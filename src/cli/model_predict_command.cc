// `headroom model predict`: time, power and energy of one inference batch of any catalogued model
// on any catalogued GPU, at a clock lock or under a power limit.
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "catalog/inference_fits.h"
#include "catalog/model_catalog.h"
#include "cli/commands.h"
#include "model/inference_model.h"

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
  bool json = false;
};

using json = nlohmann::ordered_json;

json EstimateJson(const model::PhaseEstimate& e) {
  return {{"time_ms", e.time_s * 1e3},
          {"sm_clock_mhz", e.clock.value()},
          {"power_w", e.power.value()},
          {"energy_j", e.energy.value()}};
}

int RunPredict(const GlobalOptions& global, const PredictOptions& o) {
  auto hardware = LoadCatalog(global);
  if (!hardware) return ReportError(hardware.error());
  auto gpu = hardware->Gpu(o.gpu);
  if (!gpu) return ReportError(gpu.error().WithContext("--gpu"));
  auto models = catalog::ModelCatalog::Embedded();
  if (!models) return ReportError(models.error());
  auto spec = models->Model(o.model);
  if (!spec) return ReportError(spec.error().WithContext("--model"));
  if ((*spec)->heads % o.tp != 0) {
    return ReportError(core::Error::InvalidArgument(fmt::format(
        "--tp {}: must divide {}'s {} attention heads", o.tp, (*spec)->name, (*spec)->heads)));
  }
  if (o.sm_clock > 0 && o.power_limit > 0) {
    return ReportError(core::Error::InvalidArgument("give --sm-clock or --power-limit, not both"));
  }
  const model::GpuSpec& g = **gpu;
  if (o.sm_clock > 0 &&
      (o.sm_clock < g.sm_clock_min.value() || o.sm_clock > g.sm_clock_max.value())) {
    return ReportError(core::Error::OutOfRange(
        fmt::format("--sm-clock {} MHz is outside {}'s range {}-{} MHz", o.sm_clock, g.name,
                    g.sm_clock_min.value(), g.sm_clock_max.value())));
  }
  if (o.power_limit > 0 &&
      (o.power_limit < g.power_limit_min.value() || o.power_limit > g.power_limit_max.value())) {
    return ReportError(core::Error::OutOfRange(
        fmt::format("--power-limit {} W is outside {}'s settable range {}-{} W", o.power_limit,
                    g.name, g.power_limit_min.value(), g.power_limit_max.value())));
  }
  auto fits = catalog::InferenceFits::Embedded();
  if (!fits) return ReportError(fits.error());
  auto fit = fits->For(g.name);
  if (!fit) return ReportError(fit.error());

  const model::InferenceModel m(**spec, model::GpuPowerModel(g), fit->efficiency);
  const int context = o.context >= 0 ? o.context : o.prompt + o.output / 2;
  const model::InferenceShape shape{
      .tp = o.tp, .batch = o.batch, .prompt = o.prompt, .context = context};
  auto run = [&](const model::Phase& phase) {
    if (o.power_limit > 0) return m.UnderPowerLimit(phase, o.tp, core::Watts(o.power_limit));
    const core::Megahertz f =
        o.sm_clock > 0 ? g.SnapClock(core::Megahertz(o.sm_clock)) : g.sm_clock_max;
    return m.AtClock(phase, o.tp, f);
  };
  const model::PhaseEstimate prefill = run(m.PrefillPhase(shape));
  const auto decode_phase = m.DecodePhase(shape);
  std::optional<model::PhaseEstimate> decode;
  if (decode_phase) decode = run(*decode_phase);

  const double decode_energy = decode ? decode->energy.value() * o.output : 0.0;
  const double batch_energy = prefill.energy.value() + decode_energy;
  const double weights_gb = m.WeightBytesPerGpu(o.tp) / 1e9;
  const double kv_gb = m.KvBytesPerGpu(o.tp, o.prompt + o.output) * o.batch / 1e9;
  const double memory_gb = static_cast<double>(g.memory_bytes) / 1e9;

  json out;
  out["model"] = (*spec)->name;
  out["gpu"] = g.name;
  out["fit_from"] = fit->fitted_on;
  out["tp"] = o.tp;
  out["batch"] = o.batch;
  out["prompt"] = o.prompt;
  out["output"] = o.output;
  out["decode_context"] = context;
  out["sm_clock_mhz"] =
      o.sm_clock > 0 ? json(g.SnapClock(core::Megahertz(o.sm_clock)).value()) : json(nullptr);
  out["power_limit_w"] = o.power_limit > 0 ? json(o.power_limit) : json(nullptr);
  out["prefill_ms"] = prefill.time_s * 1e3;
  out["decode_step_ms"] = decode ? json(decode->time_s * 1e3) : json(nullptr);
  out["prefill_power_w"] = prefill.power.value();
  out["decode_power_w"] = decode ? json(decode->power.value()) : json(nullptr);
  out["prefill"] = EstimateJson(prefill);
  out["decode_step"] = decode ? EstimateJson(*decode) : json(nullptr);
  out["energy"] = {
      {"batch_j", batch_energy},
      {"request_j", batch_energy / o.batch},
      {"per_output_token_j",
       decode ? json(batch_energy / (static_cast<double>(o.batch) * o.output)) : json(nullptr)}};
  const int span = o.prompt + (decode ? o.output : 0);
  out["exceeds_max_context"] = span > (*spec)->max_context;
  out["memory_per_gpu_gb"] = {{"weights", weights_gb},
                              {"kv_cache", kv_gb},
                              {"capacity", memory_gb},
                              {"fits", weights_gb + kv_gb <= memory_gb}};
  if (o.json) {
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << fmt::format(
      "{} on {} x {} (tp {}), batch {}, prompt {}, output {} (efficiencies fitted on {}):\n",
      (*spec)->name, o.tp, g.name, o.tp, o.batch, o.prompt, o.output, fit->fitted_on);
  std::cout << fmt::format("  prefill      {:9.1f} ms at {:.0f} MHz, {:.0f} W per GPU\n",
                           prefill.time_s * 1e3, prefill.clock.value(), prefill.power.value());
  if (decode) {
    std::cout << fmt::format(
        "  decode step  {:9.2f} ms at {:.0f} MHz, {:.0f} W per GPU (context {})\n",
        decode->time_s * 1e3, decode->clock.value(), decode->power.value(), context);
  } else {
    std::cout << "  decode       none: an encoder-only model answers in one pass\n";
  }
  std::cout << fmt::format("  energy       {:.1f} J per request", batch_energy / o.batch);
  if (decode) {
    std::cout << fmt::format(", {:.3f} J per output token",
                             batch_energy / (static_cast<double>(o.batch) * o.output));
  }
  std::cout << fmt::format(
      "\n  memory       {:.1f} GB weights + {:.1f} GB KV cache of {:.1f} GB "
      "per GPU{}\n",
      weights_gb, kv_gb, memory_gb, weights_gb + kv_gb <= memory_gb ? "" : " (DOES NOT FIT)");
  if (span > (*spec)->max_context) {
    std::cout << fmt::format("  note         {} tokens exceed {}'s trained context of {}\n", span,
                             (*spec)->name, (*spec)->max_context);
  }
  return kExitOk;
}

}  // namespace

void AddModelPredict(CLI::App* model, const GlobalOptions& global, RunFunction* run) {
  auto o = std::make_shared<PredictOptions>();
  CLI::App* cmd = model->add_subcommand(
      "predict", "Predict prefill and decode time, power and energy of an inference batch");
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
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([run, o, &global] { *run = [o, &global] { return RunPredict(global, *o); }; });
}

}  // namespace headroom::cli
