#include "model/batch_prediction.h"

namespace headroom::model {

BatchPrediction PredictBatch(const InferenceModel& m, const BatchQuery& q) {
  const GpuSpec& g = m.gpu().spec();
  BatchPrediction p;
  p.context = q.context.value_or(q.prompt + q.output / 2);
  if (q.sm_clock) p.locked_clock = g.SnapClock(*q.sm_clock);
  const InferenceShape shape{
      .tp = q.tp, .batch = q.batch, .prompt = q.prompt, .context = p.context};
  auto run = [&](const Phase& phase) {
    if (q.power_limit) return m.UnderPowerLimit(phase, q.tp, *q.power_limit);
    return m.AtClock(phase, q.tp, p.locked_clock.value_or(g.sm_clock_max));
  };
  p.prefill = run(m.PrefillPhase(shape));
  if (const auto decode = m.DecodePhase(shape)) p.decode = run(*decode);

  const double decode_energy = p.decode ? p.decode->energy.value() * q.output : 0.0;
  p.batch_energy_j = p.prefill.energy.value() + decode_energy;
  p.request_energy_j = p.batch_energy_j / q.batch;
  if (p.decode) {
    p.per_output_token_j = p.batch_energy_j / (static_cast<double>(q.batch) * q.output);
  }
  p.weights_gb = m.WeightBytesPerGpu(q.tp) / 1e9;
  p.kv_cache_gb = m.KvBytesPerGpu(q.tp, q.prompt + q.output) * q.batch / 1e9;
  p.memory_gb = static_cast<double>(g.memory_bytes) / 1e9;
  p.fits_in_memory = p.weights_gb + p.kv_cache_gb <= p.memory_gb;
  p.span = q.prompt + (p.decode ? q.output : 0);
  p.exceeds_max_context = p.span > m.model().max_context;
  p.default_power_limit = g.power_limit_default;
  const core::Megahertz asked = p.locked_clock.value_or(g.sm_clock_max);
  p.prefill_held = !q.power_limit && p.prefill.clock < asked;
  p.decode_held = !q.power_limit && p.decode && p.decode->clock < asked;
  return p;
}

}  // namespace headroom::model
