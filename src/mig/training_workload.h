// A training workload as measured on a reference GPU (data/workloads/mig-training.yaml), and the
// fit that the slice model derives from its measurements: a per-iteration time with a part that
// scales with SMs, a part that scales with memory bandwidth and a part that scales with neither,
// a memory footprint linear in the batch, and a dynamic energy per iteration linear in the batch.
// Pure; values.
#ifndef HEADROOM_MIG_TRAINING_WORKLOAD_H_
#define HEADROOM_MIG_TRAINING_WORKLOAD_H_

#include <string>
#include <vector>

#include "core/result.h"
#include "model/gpu_spec.h"

namespace headroom::mig {

// One measured batch size on the whole reference GPU.
struct MeasuredPoint {
  int batch = 0;
  double samples_per_s = 0;
  double power_w = 0;     // whole-GPU average
  double memory_gib = 0;  // peak memory allocated by the framework
};

enum class Optimizer { kSgdMomentum, kAdamW };

struct MeasuredWorkload {
  std::string name = {};   // "resnet50-pretrain"
  std::string model = {};  // "resnet50"
  std::string kind = {};   // "image" or "llm"
  std::string mode = {};   // "pretrain" or "finetune"
  double parameters = 0;
  bool head_only = false;  // only a classifier head is trained (the optimizer step is negligible)
  Optimizer optimizer = Optimizer::kSgdMomentum;
  double flops_per_sample = 0;
  double samples_per_epoch = 0;
  int default_batch = 0;
  std::vector<MeasuredPoint> measured = {};  // at least two batch sizes, ascending
};

// What the model derives from a workload's measurements (see docs/mig.md, "The slice model").
struct WorkloadFit {
  double host_s = 0;         // per iteration, scales with nothing (CPU-side launches, Python)
  double optimizer_s = 0;    // per iteration on the whole reference GPU, bandwidth-bound
  double per_sample_s = 0;   // GPU time per sample on the whole reference GPU
  double compute_share = 0;  // of per_sample_s that scales with SMs x clock (the rest: bandwidth)
  double memory_fixed_gib = 0;
  double memory_per_sample_gib = 0;
  // Dynamic energy per iteration at the maximum clock, beyond idle and beyond the chip-wide
  // active power (the power model's active_w: clock tree and leakage rise while any kernel runs,
  // paid once however many instances run) = energy_per_sample_j x batch + fixed_energy_j: a
  // straight line through the measured points. This is the energy of the work itself, the same
  // wherever it runs (at the same clock).
  double energy_per_sample_j = 0;
  double fixed_energy_j = 0;
  // The fit's error on the measured whole-GPU power (max over points, W), for the docs.
  double power_fit_error_w = 0;
};

// Bytes the optimizer step moves per trained parameter (fp32 master weights and states): SGD with
// momentum reads weight, gradient and momentum and writes weight and momentum (20 B); AdamW also
// reads and writes the second moment (28 B).
double OptimizerBytesPerParameter(Optimizer optimizer);

// The achieved fraction of the datasheet bandwidth for the optimizer's streaming access; 0.9 is
// what a device-to-device copy reached on the H200 here (4.3 of 4.8 TB/s, KINDS.md).
inline constexpr double kStreamingBandwidthEfficiency = 0.9;

// Fits a workload measured on `reference` (idle power `reference_idle_w`). kInvalidArgument when
// its points cannot be fitted (fewer than two batch sizes, or throughput falling with batch).
[[nodiscard]] core::Result<WorkloadFit> FitWorkload(const MeasuredWorkload& workload,
                                                    const model::GpuSpec& reference,
                                                    double reference_idle_w);

}  // namespace headroom::mig

#endif  // HEADROOM_MIG_TRAINING_WORKLOAD_H_
