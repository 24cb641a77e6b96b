#include "model/engine_fit.h"

#include <cmath>
#include <cstddef>

#include <fmt/format.h>

#include "model/efficiency_search.h"

namespace headroom::model {
namespace {

bool IsPower(const Observation& o) { return o.measurement.metric == Metric::kGpuPowerW; }

double PredictWith(const GpuPowerModel& gpu, const InferenceEfficiency& e, const Observation& o) {
  return Predict(InferenceModel(*o.model, gpu, e), o.measurement);
}

}  // namespace

core::Result<EngineGpuFit> FitEngineOnGpu(const GpuPowerModel& gpu,
                                          const std::vector<Observation>& rows, double activity) {
  std::vector<const Observation*> timed, powered;
  for (const Observation& o : rows) (IsPower(o) ? powered : timed).push_back(&o);
  if (timed.size() < 2 * kEfficiencyTimeParameters) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} timing rows on {} are too few to fit {} parameters", timed.size(),
                    gpu.spec().name, kEfficiencyTimeParameters)));
  }
  const EfficiencyLoss squared_log_error = [&](const InferenceEfficiency& e) {
    double sum = 0;
    for (const Observation* o : timed) {
      sum += std::pow(std::log(PredictWith(gpu, e, *o) / o->measurement.value), 2);
    }
    return sum / static_cast<double>(timed.size());
  };
  EngineGpuFit out;
  HEADROOM_ASSIGN_OR_RETURN(out.efficiency, MinimizeTimeLoss(squared_log_error, gpu.spec().name));
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

}  // namespace headroom::model
