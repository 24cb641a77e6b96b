// InferenceModel: time and power of LLM inference phases on one GPU type, from the model's
// architecture (FLOPs and bytes of weights, KV cache and attention), the GPU's roofline and
// power model, tensor-parallel communication, and a few efficiency parameters fitted per GPU type
// (inference_fit.h). Nothing in it is specific to one model: other models are predicted from their
// architecture alone. Pure; immutable after construction, so thread-safe.
#ifndef HEADROOM_MODEL_INFERENCE_MODEL_H_
#define HEADROOM_MODEL_INFERENCE_MODEL_H_

#include <optional>

#include "core/units.h"
#include "model/gpu_power_model.h"
#include "model/model_spec.h"

namespace headroom::model {

// The fitted parameters of one GPU type (data/fits/splitwise-sim.yaml).
struct InferenceEfficiency {
  // Achieved fraction of peak FLOP/s in dense layers wide enough to fill the GPU. Narrower
  // per-GPU matrices (a small model, or a large one split over many GPUs) reach less:
  // efficiency x width / (width + half_efficiency_width), width = the FFN's columns per GPU.
  double compute_efficiency = 0.6;
  double half_efficiency_width = 0.0;
  double memory_efficiency = 0.8;  // achieved fraction of peak bandwidth streaming weights/KV
  double prefill_layer_overhead_s = 0.0;      // fixed cost of a prefill pass (scheduling, launches)
  double prefill_layer_per_sequence_s = 0.0;  // per sequence of a prefill batch
  double decode_layer_overhead_s = 0.0;       // fixed cost of a decode step
  double per_sequence_s = 0.0;    // per sequence and decode step (sampling, bookkeeping)
  double allreduce_step_s = 0.0;  // latency of one step of a ring all-reduce (tp > 1)
  // Fixed latency of each all-reduce (tp > 1) whatever the number of GPUs: NCCL on an NVSwitch
  // node reduces small decode messages in one tree or in-switch pass, so its cost barely grows
  // with tp, unlike the ring steps above (docs/inference-model.md, today's vLLM).
  double allreduce_latency_s = 0.0;
  // SM and memory activity during the fixed costs above, fitted on measured average power.
  double overhead_activity = 0.0;
  // Host work of a serving process in every decode step, during which the GPUs wait with no
  // kernel running (scheduling, output processing, detokenizing and streaming each token): fixed
  // per step, and per running sequence (Phase::host_wait_s). 0 for engines measured offline;
  // vLLM 0.5's API server under load spends most of a step there (docs/inference-model.md).
  double host_step_s = 0.0;
  double host_per_sequence_s = 0.0;
  // The serving process's own time per request before its first token (HTTP, tokenization,
  // scheduling, streaming back), on no GPU: added to TTFT by a served run (measurement.h) and
  // by the row simulator unless its scenario sets `serving.overhead`. 0 for engines measured
  // offline.
  double server_request_s = 0.0;
};

struct InferenceShape {
  int tp = 1;       // tensor parallelism: GPUs sharing each layer
  int batch = 1;    // sequences processed together
  int prompt = 0;   // prompt tokens per sequence (prefill)
  int context = 0;  // tokens in each sequence's KV cache at a decode step
};

struct PhaseEstimate {
  double time_s = 0;
  core::Megahertz clock{0};
  core::Watts power{0};    // per GPU
  core::Joules energy{0};  // all tp GPUs
};

class InferenceModel {
 public:
  InferenceModel(ModelSpec model, GpuPowerModel gpu, InferenceEfficiency efficiency);

  const ModelSpec& model() const { return model_; }
  const GpuPowerModel& gpu() const { return gpu_; }
  const InferenceEfficiency& efficiency() const { return efficiency_; }

  // One GPU's share of the work. REQUIRES: shape.tp >= 1, batch >= 1, prompt >= 1.
  Phase PrefillPhase(const InferenceShape& shape) const;
  // nullopt for encoder-only models, which have no decode phase.
  std::optional<Phase> DecodePhase(const InferenceShape& shape) const;

  // The same phases for a batch of sequences of different lengths, as a serving engine runs them:
  // prefill of `sequences` prompts holding `tokens` tokens in all, of which the sum of squared
  // prompt lengths is `tokens_squared` (attention cost); a decode step of `batch` sequences whose
  // KV caches hold `total_context` tokens in all. REQUIRES: sequences >= 1, tokens >= sequences.
  Phase PrefillPhaseForBatch(int tp, int sequences, double tokens, double tokens_squared) const;
  // REQUIRES: batch >= 1, total_context >= 0, a model with a decoder.
  Phase DecodePhaseForBatch(int tp, int batch, double total_context) const;
  // The same in two parts, for callers that build many steps of a few batch sizes (the row
  // simulator): what depends on the batch alone, once per batch, then the step at a context.
  struct DecodeBatch {
    int tp = 1;
    double weight_flops = 0;  // FLOPs of the weights for the batch, all GPUs
    double weight_bytes = 0;  // bytes of the weights, all GPUs
    double overhead_s = 0;
    double host_wait_s = 0;
    double compute_efficiency = 1.0;
  };
  // REQUIRES: as DecodePhaseForBatch.
  DecodeBatch DecodeBatchTerms(int tp, int batch) const;
  // REQUIRES: total_context >= 0.
  Phase DecodeStep(const DecodeBatch& batch, double total_context) const;
  // One iteration of continuous batching: a prefill joined to a decode step of the running
  // sequences. The weights stream once for both, and both pay their per-sequence costs.
  Phase MixedPhase(const Phase& prefill, const Phase& decode, int tp) const;

  // At a clock (the GPU's maximum unless locked lower), or under a power limit (the steady
  // clock the firmware settles at, model/power_limiter.h). Either way under the GPU's default
  // power limit (TDP), which a real GPU holds at any clock lock.
  PhaseEstimate AtClock(const Phase& phase, int tp, core::Megahertz clock) const;
  PhaseEstimate UnderPowerLimit(const Phase& phase, int tp, core::Watts limit) const;

  // Bytes of weights one GPU holds, and of KV cache one sequence of `tokens` needs per GPU.
  double WeightBytesPerGpu(int tp) const;
  double KvBytesPerGpu(int tp, int tokens) const;

 private:
  // Time of the tensor-parallel all-reduces of one pass of `tokens` tokens through `layers`.
  double CommunicationSeconds(int tp, double tokens, int layers) const;
  double ComputeEfficiency(int tp) const;

  ModelSpec model_;
  GpuPowerModel gpu_;
  InferenceEfficiency efficiency_;
  // The model's sizes the phases use, computed once: the row simulator builds phases tens of
  // millions of times a simulated week.
  double layer_params_ = 0;           // model_.LayerParams(false)
  double decoder_weight_params_ = 0;  // model_.DecoderWeightParams()
  double kv_bytes_per_token_ = 0;     // model_.KvBytesPerToken()
};

}  // namespace headroom::model

#endif  // HEADROOM_MODEL_INFERENCE_MODEL_H_
