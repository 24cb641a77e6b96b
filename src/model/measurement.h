// A latency or power measurement of one inference configuration, published by someone else (the
// validation suite, data/validation/) or measured by the user (a profile), and what the inference
// model predicts for it. Used to fit a serving engine's efficiency (engine_fit.h) and to report
// the model's error (`headroom model validate`). Pure value types and functions; thread-safe.
#ifndef HEADROOM_MODEL_MEASUREMENT_H_
#define HEADROOM_MODEL_MEASUREMENT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/inference_model.h"

namespace headroom::model {

enum class Metric {
  kPrefillMs,  // time to the first token of the batch: the prefill of batch x input tokens
  kDecodeMs,   // one decode step of the batch
  kEndToEndS,  // one static batch: prefill, then `output` decode steps
  kGpuPowerW,  // mean power of one GPU over the batch (and any idle tail)
  // Energy of all tp GPUs per generated token when serving at saturation (continuous batching
  // with `batch` sequences always running): each request's prefill, and its share of the decode
  // steps of the full batch.
  kJoulesPerToken,
  // Time per output token of one request when serving at saturation: a decode step of the full
  // batch, plus the step's share of the prompts prefilled meanwhile (batch / output requests
  // finish, and are replaced, in a step), ms.
  kServingTpotMs,
  // A served run (`requests` set): every request arrives at once and is prefilled together.
  // Time to first token: the server's own time per request (if `server`) plus the joint prefill.
  kRunTtftMs,
  // From the longest request's first token to its last: its output - 1 decode steps while the
  // running batch shrinks as the others finish.
  kRunDecodeSpanMs,
  // From arrival to the last token of the run: TTFT plus the decode span.
  kRunEndToEndMs,
};

// "prefill_ms", "decode_ms", "e2e_s", "gpu_power_w", "j_per_token", "tpot_ms", "ttft_ms",
// "decode_span_ms", "e2e_ms".
std::string_view MetricName(Metric metric);
std::optional<Metric> MetricFromName(std::string_view name);

// One request of a served run: its prompt and the tokens it generated.
struct RunRequest {
  int input = 0;
  int output = 0;
};

bool IsServedRunMetric(Metric metric);

struct Measurement {
  std::string dataset;  // e.g. "lmdeploy-a100"
  std::string engine;   // e.g. "vllm"
  std::string model;    // catalog names
  std::string gpu;
  int tp = 1;
  int batch = 1;
  int input = 0;   // prompt tokens per sequence (the mean, for j_per_token)
  int output = 0;  // generated tokens per sequence (the mean, for j_per_token)
  Metric metric = Metric::kDecodeMs;
  double value = 0;        // in the metric's unit
  double idle_tail_s = 0;  // idle seconds a power average includes after the batch
  std::string source;      // file:line
  // A served run's requests (the kRun* metrics; empty otherwise), and whether they went through
  // the engine's server (an HTTP API) rather than its offline entry point.
  std::vector<RunRequest> requests = {};
  bool server = false;
};

// The model's value for the measurement's configuration, in the metric's unit, at the GPU's
// maximum clock. A decode step sees the prompt plus half the output on average (exact for the
// attention and KV reads, which grow linearly with the context).
double Predict(const InferenceModel& model, const Measurement& m);

// Whether the batch's weights and KV cache (every sequence at its full length) fit in the memory
// of its GPUs: a configuration that does not was queued or preempted by its engine, so a static-
// batch prediction does not describe it.
bool FitsInMemory(const InferenceModel& model, const Measurement& m);

}  // namespace headroom::model

#endif  // HEADROOM_MODEL_MEASUREMENT_H_
