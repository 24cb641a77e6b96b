#include "model/inference_model.h"

#include "core/check.h"

namespace headroom::model {
namespace {

// Two all-reduces per transformer layer (after attention and after the FFN), Megatron-style.
constexpr double kAllReducesPerLayer = 2.0;

}  // namespace

InferenceModel::InferenceModel(ModelSpec model, GpuPowerModel gpu, InferenceEfficiency efficiency)
    : model_(std::move(model)),
      gpu_(std::move(gpu)),
      efficiency_(efficiency),
      layer_params_(model_.LayerParams(false)),
      decoder_weight_params_(model_.DecoderWeightParams()),
      kv_bytes_per_token_(model_.KvBytesPerToken()) {}

double InferenceModel::WeightBytesPerGpu(int tp) const {
  return model_.TotalParams() * model_.bytes_per_param / tp;
}

double InferenceModel::KvBytesPerGpu(int tp, int tokens) const {
  return kv_bytes_per_token_ * tokens / tp;
}

double InferenceModel::CommunicationSeconds(int tp, double tokens, int layers) const {
  if (tp <= 1) return 0;
  const double link = gpu_.spec().interconnect_bytes_per_s;
  const double message = tokens * model_.hidden * model_.bytes_per_param;
  // A ring all-reduce takes 2 (tp - 1) steps, each moving 1/tp of the message over a link.
  const double per_reduce = efficiency_.allreduce_latency_s +
                            2.0 * (tp - 1) * (efficiency_.allreduce_step_s + message / tp / link);
  return layers * kAllReducesPerLayer * per_reduce;
}

double InferenceModel::ComputeEfficiency(int tp) const {
  const double width = static_cast<double>(model_.ffn) / tp;
  return efficiency_.compute_efficiency * width / (width + efficiency_.half_efficiency_width);
}

Phase InferenceModel::PrefillPhase(const InferenceShape& s) const {
  HEADROOM_CHECK(s.tp >= 1 && s.batch >= 1 && s.prompt >= 1) << "bad inference shape";
  const double tokens = static_cast<double>(s.batch) * s.prompt;
  return PrefillPhaseForBatch(s.tp, s.batch, tokens, tokens * s.prompt);
}

Phase InferenceModel::PrefillPhaseForBatch(int tp, int sequences, double tokens,
                                           double tokens_squared) const {
  HEADROOM_CHECK(tp >= 1 && sequences >= 1 && tokens >= sequences) << "bad prefill batch";
  const bool encoder_decoder = model_.architecture == ModelArchitecture::kEncoderDecoder;
  const bool bidirectional = model_.architecture != ModelArchitecture::kDecoder;
  const int layers = encoder_decoder ? model_.encoder_layers : model_.layers;
  // Dense layers on every token; the LM head only on each sequence's last token.
  const double lm_head = static_cast<double>(model_.vocab) * model_.hidden;
  const double dense = 2.0 * layers * layer_params_ * tokens + 2.0 * lm_head * sequences;
  // QK^T and AV: 2 matmuls x 2 FLOPs x prompt^2 x attention width per layer, halved when causal.
  const double attention =
      4.0 * tokens_squared * model_.attention_dim() * layers * (bidirectional ? 1.0 : 0.5);
  const double weights = (layers * layer_params_ + lm_head) * model_.bytes_per_param;
  const double kv_written = kv_bytes_per_token_ * tokens;
  Phase phase;
  phase.flops = (dense + attention) / tp;
  phase.bytes = (weights + kv_written) / tp;
  phase.overhead_s = layers * (efficiency_.prefill_layer_overhead_s +
                               efficiency_.prefill_layer_per_sequence_s * sequences) +
                     CommunicationSeconds(tp, tokens, layers);
  phase.compute_efficiency = ComputeEfficiency(tp);
  phase.overhead_activity = efficiency_.overhead_activity;
  phase.memory_efficiency = efficiency_.memory_efficiency;
  return phase;
}

std::optional<Phase> InferenceModel::DecodePhase(const InferenceShape& s) const {
  if (model_.architecture == ModelArchitecture::kEncoder) return std::nullopt;
  HEADROOM_CHECK(s.tp >= 1 && s.batch >= 1 && s.context >= 0) << "bad inference shape";
  return DecodePhaseForBatch(s.tp, s.batch, static_cast<double>(s.context) * s.batch);
}

Phase InferenceModel::DecodePhaseForBatch(int tp, int batch, double total_context) const {
  return DecodeStep(DecodeBatchTerms(tp, batch), total_context);
}

InferenceModel::DecodeBatch InferenceModel::DecodeBatchTerms(int tp, int batch) const {
  HEADROOM_CHECK(model_.architecture != ModelArchitecture::kEncoder)
      << model_.name << " has no decode phase";
  HEADROOM_CHECK(tp >= 1 && batch >= 1) << "bad decode batch";
  const double weights = decoder_weight_params_;
  return {.tp = tp,
          .weight_flops = 2.0 * weights * batch,
          .weight_bytes = weights * model_.bytes_per_param,
          .overhead_s = model_.layers * efficiency_.decode_layer_overhead_s +
                        efficiency_.per_sequence_s * batch +
                        CommunicationSeconds(tp, batch, model_.layers),
          .host_wait_s = efficiency_.host_step_s + efficiency_.host_per_sequence_s * batch,
          .compute_efficiency = ComputeEfficiency(tp)};
}

Phase InferenceModel::DecodeStep(const DecodeBatch& batch, double total_context) const {
  HEADROOM_CHECK(total_context >= 0) << "bad decode batch";
  // Each new token attends over its cache: 2 matmuls x 2 FLOPs x context x attention width.
  const double attention = 4.0 * total_context * model_.attention_dim() * model_.layers;
  const double kv_read = kv_bytes_per_token_ * total_context;
  Phase phase;
  phase.flops = (batch.weight_flops + attention) / batch.tp;
  phase.bytes = (batch.weight_bytes + kv_read) / batch.tp;
  phase.overhead_s = batch.overhead_s;
  phase.compute_efficiency = batch.compute_efficiency;
  phase.overhead_activity = efficiency_.overhead_activity;
  phase.memory_efficiency = efficiency_.memory_efficiency;
  phase.host_wait_s = batch.host_wait_s;
  return phase;
}

Phase InferenceModel::MixedPhase(const Phase& prefill, const Phase& decode, int tp) const {
  const double decode_weights = decoder_weight_params_ * model_.bytes_per_param / tp;
  Phase mixed = prefill;
  mixed.flops += decode.flops;
  mixed.bytes += decode.bytes - decode_weights;
  // The fixed per-layer launch cost is paid once; per-sequence and communication costs add.
  mixed.overhead_s += decode.overhead_s - model_.layers * efficiency_.decode_layer_overhead_s;
  mixed.host_wait_s += decode.host_wait_s;
  return mixed;
}

PhaseEstimate InferenceModel::AtClock(const Phase& phase, int tp, core::Megahertz clock) const {
  PhaseEstimate e;
  // A GPU holds its power limit whatever its clock lock: the firmware lowers the clock.
  const core::Watts limit = gpu_.spec().power_limit_default;
  if (gpu_.PhasePower(phase, clock) > limit) clock = gpu_.MaxClockUnder(limit, phase, 1.0, clock);
  e.clock = clock;
  e.time_s = gpu_.Time(phase, clock).time_s;
  e.power = gpu_.PhasePower(phase, clock);
  e.energy = core::EnergyOver(e.power, e.time_s) * tp;
  return e;
}

PhaseEstimate InferenceModel::UnderPowerLimit(const Phase& phase, int tp, core::Watts limit) const {
  const core::Megahertz f = gpu_.MaxClockUnder(limit, phase, 1.0, gpu_.spec().sm_clock_max);
  return AtClock(phase, tp, f);
}

}  // namespace headroom::model
