// TrainingModel: one data-parallel training iteration on one GPU as a compute phase (forward and
// backward pass: 6 FLOPs per parameter per token, plus attention over the sequence) and a
// synchronization phase (gradient all-reduce and barrier) whose length does not depend on the SM
// clock and whose power dips to a per-workload level, synchronized across the job's GPUs. Pure;
// thread-safe once built.
#ifndef HEADROOM_MODEL_TRAINING_MODEL_H_
#define HEADROOM_MODEL_TRAINING_MODEL_H_

#include <string>

#include "model/gpu_power_model.h"
#include "model/inference_model.h"
#include "model/model_spec.h"

namespace headroom::model {

struct TrainingWorkload {
  std::string name;
  ModelSpec model;
  int gpus = 8;
  double tokens_per_gpu = 8192;  // per iteration
  // Sequence length, for the attention FLOPs (12 x layers x attention width x seq_len per token,
  // forward and backward); 0 leaves attention out (short sequences, where it is negligible).
  int seq_len = 0;
  double sync_fraction = 0.2;  // of an iteration at the maximum clock
  double sync_activity = 0.0;  // SM and memory activity while synchronizing
  double sync_busy = 1.0;      // share of the synchronization with kernels resident
};

struct IterationEstimate {
  double compute_s = 0;
  double sync_s = 0;
  core::Watts compute_power{0};  // per GPU
  core::Watts sync_power{0};
  core::Joules energy{0};  // per GPU and iteration
  double time_s() const { return compute_s + sync_s; }
};

class TrainingModel {
 public:
  TrainingModel(TrainingWorkload workload, GpuPowerModel gpu, InferenceEfficiency efficiency);

  const TrainingWorkload& workload() const { return workload_; }
  const GpuPowerModel& gpu() const { return gpu_; }
  Phase ComputePhase() const;
  Phase SyncPhase() const;
  // At a clock, held under the GPU's default power limit (TDP) as its firmware holds it.
  IterationEstimate AtClock(core::Megahertz clock) const;
  IterationEstimate UnderPowerLimit(core::Watts limit) const;

 private:
  TrainingWorkload workload_;
  GpuPowerModel gpu_;
  InferenceEfficiency efficiency_;
};

}  // namespace headroom::model

#endif  // HEADROOM_MODEL_TRAINING_MODEL_H_
