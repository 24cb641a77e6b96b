#include "model/engine_fit.h"

#include <cmath>
#include <cstddef>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include "model/efficiency_search.h"

namespace headroom::model {
namespace {

bool IsPower(const Observation& o) { return o.measurement.metric == Metric::kGpuPowerW; }

double PredictWith(const GpuPowerModel& gpu, const InferenceEfficiency& e, const Observation& o) {
  return Predict(InferenceModel(*o.model, gpu, e), o.measurement);
}

// The parameters today's serving engines change against the kernels of an older calibration of
// the same engine: CUDA-graph decode (the per-layer launch cost), attention kernels and memory
// streaming, a one-pass all-reduce (custom or NVLS kernels), and the server's own time per
// request. Bounds as for a full fit; the all-reduce latency up to 1 ms, the server's time up to
// 1 s.
const std::vector<FreeParameter>& ServingParameters() {
  using E = InferenceEfficiency;
  static const std::vector<FreeParameter> kServing = {
      {&E::memory_efficiency, 1.0, 0.05, 1.0, 0.8},
      {&E::decode_layer_overhead_s, 1e6, 0.0, 5000.0, 20.0},
      {&E::allreduce_latency_s, 1e6, 0.0, 1000.0, 10.0},
      {&E::server_request_s, 1e3, 0.0, 1000.0, 10.0},
  };
  return kServing;
}

using Minimizer = std::function<core::Result<InferenceEfficiency>(const EfficiencyLoss&)>;

core::Result<EngineGpuFit> FitOnGpu(const GpuPowerModel& gpu, const std::vector<Observation>& rows,
                                    double activity, std::size_t parameters,
                                    const Minimizer& minimize) {
  std::vector<const Observation*> timed, powered;
  for (const Observation& o : rows) (IsPower(o) ? powered : timed).push_back(&o);
  if (timed.size() < 2 * parameters) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} timing rows on {} are too few to fit {} parameters", timed.size(),
                    gpu.spec().name, parameters)));
  }
  const EfficiencyLoss squared_log_error = [&](const InferenceEfficiency& e) {
    double sum = 0;
    for (const Observation* o : timed) {
      sum += std::pow(std::log(PredictWith(gpu, e, *o) / o->measurement.value), 2);
    }
    return sum / static_cast<double>(timed.size());
  };
  EngineGpuFit out;
  HEADROOM_ASSIGN_OR_RETURN(out.efficiency, minimize(squared_log_error));
  out.efficiency.overhead_activity = activity;
  const auto summed_error = [&gpu](const std::vector<const Observation*>& of,
                                   const InferenceEfficiency& e) {
    double error = 0;
    for (const Observation* o : of) {
      error += std::abs(PredictWith(gpu, e, *o) / o->measurement.value - 1.0);
    }
    return error;
  };
  if (!powered.empty()) {
    double best = 0;
    out.efficiency = FitOverheadActivity(
        out.efficiency, [&](const InferenceEfficiency& e) { return summed_error(powered, e); },
        &best);
    out.power_rows = static_cast<int>(powered.size());
    out.power_mape = best / static_cast<double>(powered.size());
  }
  out.time_rows = static_cast<int>(timed.size());
  out.time_mape = summed_error(timed, out.efficiency) / static_cast<double>(timed.size());
  return out;
}

}  // namespace

core::Result<EngineGpuFit> FitEngineOnGpu(const GpuPowerModel& gpu,
                                          const std::vector<Observation>& rows, double activity) {
  return FitOnGpu(
      gpu, rows, activity, kEfficiencyTimeParameters,
      [&gpu](const EfficiencyLoss& loss) { return MinimizeTimeLoss(loss, gpu.spec().name); });
}

core::Result<EngineGpuFit> FitServingEngineOnGpu(const GpuPowerModel& gpu,
                                                 const InferenceEfficiency& base,
                                                 const std::vector<Observation>& rows) {
  // Today's engines reduce a step's small messages in one pass over NVLink (vLLM's custom
  // all-reduce: each GPU reads its peers' buffers once; NCCL's NVLS on an NVSwitch), not in
  // 2 (tp - 1) ring steps of fixed latency: that latency is one fitted term per all-reduce
  // (allreduce_latency_s), and only the bandwidth term of the ring remains.
  InferenceEfficiency one_pass = base;
  one_pass.allreduce_step_s = 0;
  return FitOnGpu(gpu, rows, base.overhead_activity, ServingParameters().size(),
                  [&](const EfficiencyLoss& loss) {
                    return MinimizeOver(one_pass, ServingParameters(), loss, gpu.spec().name);
                  });
}

}  // namespace headroom::model
