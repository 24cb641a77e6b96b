// Fitting a serving engine's efficiency on one GPU type from measurements of several models
// (measurement.h): the calibration rows of the validation suite, or a user's own profile. The
// loss is the squared log error of every time metric; the overhead activity is then fitted on
// the power rows, if any. Pure computation; thread-compatible.
#ifndef HEADROOM_MODEL_ENGINE_FIT_H_
#define HEADROOM_MODEL_ENGINE_FIT_H_

#include <optional>
#include <vector>

#include "core/result.h"
#include "model/gpu_power_model.h"
#include "model/measurement.h"
#include "model/model_spec.h"

namespace headroom::model {

// A measurement with the architecture of the model it measured.
struct Observation {
  const ModelSpec* model = nullptr;
  Measurement measurement;
};

struct EngineGpuFit {
  InferenceEfficiency efficiency;
  int time_rows = 0;
  int power_rows = 0;
  double time_mape = 0;   // on the rows fitted, as a fraction
  double power_mape = 0;  // 0 without power rows
};

// REQUIRES: every observation measured `gpu`. `activity` is the overhead activity to keep when
// no row measured power (another fit's). kInvalidArgument with fewer time rows than twice the
// parameters.
[[nodiscard]] core::Result<EngineGpuFit> FitEngineOnGpu(const GpuPowerModel& gpu,
                                                        const std::vector<Observation>& rows,
                                                        double activity);

// A serving engine measured end to end (served runs, measurement.h) whose kernels an older
// calibration of the same engine already describes (`base`, on this GPU type): only what
// serving changes is fitted (the memory efficiency, the decode step's per-layer fixed cost, the
// latency of one all-reduce, which replaces the ring's per-step latency, the server's own time
// per request); the rest is `base`'s.
// kInvalidArgument with fewer time rows than twice those parameters.
[[nodiscard]] core::Result<EngineGpuFit> FitServingEngineOnGpu(
    const GpuPowerModel& gpu, const InferenceEfficiency& base,
    const std::vector<Observation>& rows);

}  // namespace headroom::model

#endif  // HEADROOM_MODEL_ENGINE_FIT_H_
