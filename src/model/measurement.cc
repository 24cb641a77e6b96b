#include "model/measurement.h"

#include <algorithm>
#include <array>
#include <utility>

namespace headroom::model {
namespace {

constexpr std::array<std::pair<Metric, std::string_view>, 9> kMetricNames = {{
    {Metric::kPrefillMs, "prefill_ms"},
    {Metric::kDecodeMs, "decode_ms"},
    {Metric::kEndToEndS, "e2e_s"},
    {Metric::kGpuPowerW, "gpu_power_w"},
    {Metric::kJoulesPerToken, "j_per_token"},
    {Metric::kServingTpotMs, "tpot_ms"},
    {Metric::kRunTtftMs, "ttft_ms"},
    {Metric::kRunDecodeSpanMs, "decode_span_ms"},
    {Metric::kRunEndToEndMs, "e2e_ms"},
}};

PhaseEstimate Prefill(const InferenceModel& model, const Measurement& m) {
  const Phase phase =
      model.PrefillPhase({.tp = m.tp, .batch = m.batch, .prompt = m.input, .context = 0});
  return model.AtClock(phase, m.tp, model.gpu().spec().sm_clock_max);
}

// One request's prompt, prefilled on its own (a serving engine with chunked prefill off runs
// the prefills of waiting requests as iterations of their own; the energy and time of a
// compute-bound prefill are close to linear in its tokens, so batching them changes little).
PhaseEstimate OnePrefill(const InferenceModel& model, Measurement m) {
  m.batch = 1;
  return Prefill(model, m);
}

PhaseEstimate DecodeStep(const InferenceModel& model, const Measurement& m) {
  const Phase phase = *model.DecodePhase(
      {.tp = m.tp, .batch = m.batch, .prompt = m.input, .context = m.input + m.output / 2});
  return model.AtClock(phase, m.tp, model.gpu().spec().sm_clock_max);
}

// At the GPU's maximum clock, as the row simulator runs an uncapped GPU.
double AtMaxClock(const InferenceModel& model, const Phase& phase, int tp) {
  return model.AtClock(phase, tp, model.gpu().spec().sm_clock_max).time_s;
}

// The run's first token: every prompt prefilled in one pass, after the server's own time.
double RunTtftSeconds(const InferenceModel& model, const Measurement& m) {
  double tokens = 0;
  double squared = 0;
  for (const RunRequest& r : m.requests) {
    tokens += r.input;
    squared += static_cast<double>(r.input) * r.input;
  }
  const auto sequences = static_cast<int>(m.requests.size());
  const Phase prefill = model.PrefillPhaseForBatch(m.tp, sequences, tokens, squared);
  return (m.server ? model.efficiency().server_request_s : 0.0) + AtMaxClock(model, prefill, m.tp);
}

// Step k (k = 1 .. longest output - 1) generates token k + 1 of every request with more than k
// tokens; each sees its prompt plus the k tokens before.
double RunDecodeSpanSeconds(const InferenceModel& model, const Measurement& m) {
  int longest = 0;
  for (const RunRequest& r : m.requests) longest = std::max(longest, r.output);
  double span = 0;
  int terms_batch = 0;
  InferenceModel::DecodeBatch terms;
  for (int k = 1; k < longest; ++k) {
    int batch = 0;
    double context = 0;
    for (const RunRequest& r : m.requests) {
      if (r.output <= k) continue;
      ++batch;
      context += r.input + k;
    }
    if (batch != terms_batch) {
      terms = model.DecodeBatchTerms(m.tp, batch);
      terms_batch = batch;
    }
    span += AtMaxClock(model, model.DecodeStep(terms, context), m.tp);
  }
  return span;
}

}  // namespace

bool IsServedRunMetric(Metric metric) {
  return metric == Metric::kRunTtftMs || metric == Metric::kRunDecodeSpanMs ||
         metric == Metric::kRunEndToEndMs;
}

std::string_view MetricName(Metric metric) {
  for (const auto& [value, name] : kMetricNames) {
    if (value == metric) return name;
  }
  return "?";
}

std::optional<Metric> MetricFromName(std::string_view name) {
  for (const auto& [value, known] : kMetricNames) {
    if (known == name) return value;
  }
  return std::nullopt;
}

double Predict(const InferenceModel& model, const Measurement& m) {
  switch (m.metric) {
    case Metric::kPrefillMs:
      return Prefill(model, m).time_s * 1e3;
    case Metric::kDecodeMs:
      return DecodeStep(model, m).time_s * 1e3;
    case Metric::kEndToEndS:
      return Prefill(model, m).time_s + m.output * DecodeStep(model, m).time_s;
    case Metric::kGpuPowerW: {
      const PhaseEstimate prefill = Prefill(model, m);
      const PhaseEstimate decode = DecodeStep(model, m);
      const double busy_s = prefill.time_s + m.output * decode.time_s;
      // Energy of one GPU: the estimates' energy is over all tp GPUs.
      const double joules = (prefill.energy.value() + m.output * decode.energy.value()) / m.tp +
                            model.gpu().spec().idle_power.value() * m.idle_tail_s;
      return joules / (busy_s + m.idle_tail_s);
    }
    case Metric::kJoulesPerToken:
      // A request's prompt is prefilled once; each of its tokens is one sequence's share of a
      // decode step of the full batch.
      return OnePrefill(model, m).energy.value() / m.output +
             DecodeStep(model, m).energy.value() / m.batch;
    case Metric::kServingTpotMs:
      return (DecodeStep(model, m).time_s +
              static_cast<double>(m.batch) / m.output * OnePrefill(model, m).time_s) *
             1e3;
    case Metric::kRunTtftMs:
      return RunTtftSeconds(model, m) * 1e3;
    case Metric::kRunDecodeSpanMs:
      return RunDecodeSpanSeconds(model, m) * 1e3;
    case Metric::kRunEndToEndMs:
      return (RunTtftSeconds(model, m) + RunDecodeSpanSeconds(model, m)) * 1e3;
  }
  return 0;
}

bool FitsInMemory(const InferenceModel& model, const Measurement& m) {
  double kv = model.KvBytesPerGpu(m.tp, m.input + m.output) * m.batch;
  if (!m.requests.empty()) {
    kv = 0;
    for (const RunRequest& r : m.requests) kv += model.KvBytesPerGpu(m.tp, r.input + r.output);
  }
  return model.WeightBytesPerGpu(m.tp) + kv <= static_cast<double>(model.gpu().spec().memory_bytes);
}

}  // namespace headroom::model
