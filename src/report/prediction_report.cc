#include "report/prediction_report.h"

#include <fmt/format.h>

namespace headroom::report {
namespace {

using nlohmann::ordered_json;

ordered_json EstimateJson(const model::PhaseEstimate& e) {
  return {{"time_ms", e.time_s * 1e3},
          {"sm_clock_mhz", e.clock.value()},
          {"power_w", e.power.value()},
          {"energy_j", e.energy.value()}};
}

}  // namespace

ordered_json PredictionJson(const PredictionContext& c, const model::BatchQuery& q,
                            const model::BatchPrediction& p) {
  ordered_json out;
  out["model"] = c.model;
  out["gpu"] = c.gpu;
  out["engine"] = c.engine;
  out["engine_version"] = c.engine_version;
  out["fit_from"] = c.fitted_on;
  out["tp"] = q.tp;
  out["batch"] = q.batch;
  out["prompt"] = q.prompt;
  out["output"] = q.output;
  out["decode_context"] = p.context;
  out["sm_clock_mhz"] =
      p.locked_clock ? ordered_json(p.locked_clock->value()) : ordered_json(nullptr);
  out["power_limit_w"] =
      q.power_limit ? ordered_json(q.power_limit->value()) : ordered_json(nullptr);
  out["prefill_ms"] = p.prefill.time_s * 1e3;
  out["decode_step_ms"] = p.decode ? ordered_json(p.decode->time_s * 1e3) : ordered_json(nullptr);
  out["prefill_power_w"] = p.prefill.power.value();
  out["decode_power_w"] = p.decode ? ordered_json(p.decode->power.value()) : ordered_json(nullptr);
  out["prefill"] = EstimateJson(p.prefill);
  out["decode_step"] = p.decode ? EstimateJson(*p.decode) : ordered_json(nullptr);
  out["energy"] = {{"batch_j", p.batch_energy_j},
                   {"request_j", p.request_energy_j},
                   {"per_output_token_j", p.per_output_token_j ? ordered_json(*p.per_output_token_j)
                                                               : ordered_json(nullptr)}};
  out["exceeds_max_context"] = p.exceeds_max_context;
  out["default_power_limit_w"] = p.default_power_limit.value();
  out["held_at_default_power_limit"] = {{"prefill", p.prefill_held}, {"decode", p.decode_held}};
  out["memory_per_gpu_gb"] = {{"weights", p.weights_gb},
                              {"kv_cache", p.kv_cache_gb},
                              {"capacity", p.memory_gb},
                              {"fits", p.fits_in_memory}};
  return out;
}

std::string PredictionText(const PredictionContext& c, const model::BatchQuery& q,
                           const model::BatchPrediction& p) {
  std::string out = fmt::format(
      "{} on {} x {} (tp {}), batch {}, prompt {}, output {} (engine {}, fitted on {}):\n", c.model,
      q.tp, c.gpu, q.tp, q.batch, q.prompt, q.output,
      c.engine_version.empty() ? c.engine : c.engine + " " + c.engine_version, c.fitted_on);
  out += fmt::format("  prefill      {:9.1f} ms at {:.0f} MHz, {:.0f} W per GPU\n",
                     p.prefill.time_s * 1e3, p.prefill.clock.value(), p.prefill.power.value());
  if (p.decode) {
    out += fmt::format("  decode step  {:9.2f} ms at {:.0f} MHz, {:.0f} W per GPU (context {})\n",
                       p.decode->time_s * 1e3, p.decode->clock.value(), p.decode->power.value(),
                       p.context);
  } else {
    out += "  decode       none: an encoder-only model answers in one pass\n";
  }
  out += fmt::format("  energy       {:.1f} J per request", p.request_energy_j);
  if (p.per_output_token_j)
    out += fmt::format(", {:.3f} J per output token", *p.per_output_token_j);
  out += fmt::format(
      "\n  memory       {:.1f} GB weights + {:.1f} GB KV cache of {:.1f} GB per GPU{}\n",
      p.weights_gb, p.kv_cache_gb, p.memory_gb, p.fits_in_memory ? "" : " (DOES NOT FIT)");
  if (p.exceeds_max_context) {
    out += fmt::format("  note         {} tokens exceed {}'s trained context of {}\n", p.span,
                       c.model, c.max_context);
  }
  if (p.prefill_held || p.decode_held) {
    out += fmt::format(
        "  note         {} at a lower clock than asked: the GPU holds its {:.0f} W power limit\n",
        p.prefill_held && p.decode_held ? "prefill and decode run"
        : p.prefill_held                ? "prefill runs"
                                        : "decode runs",
        p.default_power_limit.value());
  }
  return out;
}

}  // namespace headroom::report
