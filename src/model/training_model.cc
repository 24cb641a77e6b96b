#include "model/training_model.h"

namespace headroom::model {
namespace {

// Bytes touched per parameter and iteration: weights read twice (forward, backward), gradients
// written, and Adam's fp32 master weights and two moments read and written.
constexpr double kBytesPerParameter = 2 + 2 + 2 + 3 * 4 * 2;

}  // namespace

TrainingModel::TrainingModel(TrainingWorkload workload, GpuPowerModel gpu,
                             InferenceEfficiency efficiency)
    : workload_(std::move(workload)), gpu_(std::move(gpu)), efficiency_(efficiency) {}

Phase TrainingModel::ComputePhase() const {
  const double params = workload_.model.TotalParams();
  Phase phase;
  const ModelSpec& m = workload_.model;
  const double attention_per_token = 12.0 * m.layers * m.attention_dim() * workload_.seq_len;
  phase.flops = (6.0 * params + attention_per_token) * workload_.tokens_per_gpu;
  phase.bytes = kBytesPerParameter * params;
  phase.compute_efficiency = efficiency_.compute_efficiency;
  phase.memory_efficiency = efficiency_.memory_efficiency;
  return phase;
}

Phase TrainingModel::SyncPhase() const {
  const double compute_at_max = gpu_.Time(ComputePhase(), gpu_.spec().sm_clock_max).time_s;
  const double f = workload_.sync_fraction;
  Phase phase;
  phase.overhead_s = compute_at_max * f / (1.0 - f);
  phase.overhead_activity = workload_.sync_activity;
  phase.overhead_busy = workload_.sync_busy;
  return phase;
}

IterationEstimate TrainingModel::AtClock(core::Megahertz clock) const {
  IterationEstimate e;
  const Phase compute = ComputePhase();
  const Phase sync = SyncPhase();
  // A GPU holds its power limit whatever its clock lock: the firmware lowers the clock.
  const core::Watts limit = gpu_.spec().power_limit_default;
  if (gpu_.PhasePower(compute, clock) > limit) {
    clock = gpu_.MaxClockUnder(limit, compute, 1.0, clock);
  }
  e.compute_s = gpu_.Time(compute, clock).time_s;
  e.sync_s = sync.overhead_s;
  e.compute_power = gpu_.PhasePower(compute, clock);
  e.sync_power = gpu_.PhasePower(sync, clock);
  e.energy =
      core::EnergyOver(e.compute_power, e.compute_s) + core::EnergyOver(e.sync_power, e.sync_s);
  return e;
}

IterationEstimate TrainingModel::UnderPowerLimit(core::Watts limit) const {
  return AtClock(gpu_.MaxClockUnder(limit, ComputePhase(), 1.0, gpu_.spec().sm_clock_max));
}

}  // namespace headroom::model
