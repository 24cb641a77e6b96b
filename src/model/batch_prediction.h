// One inference batch predicted end to end (what `headroom model predict` answers): prefill and
// a decode step at a clock lock, under a power limit or at the maximum clock; the energy of the
// batch, of a request and of an output token; whether weights and KV cache fit in memory and the
// tokens in the model's trained context. Pure; thread-compatible.
#ifndef HEADROOM_MODEL_BATCH_PREDICTION_H_
#define HEADROOM_MODEL_BATCH_PREDICTION_H_

#include <optional>

#include "core/units.h"
#include "model/inference_model.h"

namespace headroom::model {

struct BatchQuery {
  int tp = 8;
  int batch = 1;
  int prompt = 1024;
  int output = 128;
  std::optional<int> context = {};  // KV tokens per sequence at the decode step; default: the
                                    // mean over the generation, prompt + output / 2
  std::optional<core::Megahertz> sm_clock = {};  // snapped to the GPU's steps
  std::optional<core::Watts> power_limit = {};   // wins over sm_clock when both are given
};

struct BatchPrediction {
  int context = 0;
  std::optional<core::Megahertz> locked_clock = {};  // the snapped lock, when one was asked for
  PhaseEstimate prefill = {};
  std::optional<PhaseEstimate> decode = {};  // none for an encoder-only model
  double batch_energy_j = 0;                 // prefill plus `output` decode steps
  double request_energy_j = 0;
  std::optional<double> per_output_token_j = {};
  double weights_gb = 0, kv_cache_gb = 0, memory_gb = 0;  // per GPU
  bool fits_in_memory = false;
  int span = 0;  // tokens a sequence reaches: prompt, plus output when there is a decode
  bool exceeds_max_context = false;
  // The GPU's default power limit (TDP), and the phases it held below the clock asked for (the
  // maximum or the lock; under a power limit asked for, that one holds them).
  core::Watts default_power_limit{0};
  bool prefill_held = false;
  bool decode_held = false;
};

BatchPrediction PredictBatch(const InferenceModel& model, const BatchQuery& query);

}  // namespace headroom::model

#endif  // HEADROOM_MODEL_BATCH_PREDICTION_H_
