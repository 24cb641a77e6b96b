// SliceModel: how fast training jobs run on GPU slices (MIG instances, or the whole GPU with MIG
// off) and what the whole GPU draws while they run side by side. Each job's iteration is host
// time (unchanged by the slice), GPU time per sample split into a part that scales with the
// slice's SMs and clock and a part that scales with its memory slices (bandwidth), and the
// optimizer step (bandwidth). Whole-GPU power is the GPU power model's idle power, plus its
// chip-wide active power (clock tree, leakage) once while any job runs, plus each job's work
// power: its energy per iteration (the same work wherever it runs) over its iteration time,
// capped at its SMs' share of the model's saturated SM and memory power. Clock-dependent parts
// follow the model's DVFS law. When the sum exceeds the power limit, the one SM clock all
// instances share drops until it fits. Pure; immutable, thread-safe.
#ifndef HEADROOM_MIG_SLICE_MODEL_H_
#define HEADROOM_MIG_SLICE_MODEL_H_

#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/units.h"
#include "mig/layout.h"
#include "mig/profile.h"
#include "mig/training_workload.h"
#include "model/gpu_power_model.h"

namespace headroom::mig {

// Where a job runs.
struct Slice {
  std::string name = {};  // "3g.40gb@4", or "whole GPU"
  int sm_count = 0;
  int memory_slices = 0;  // share of the GPU's memory bandwidth, in memory slices
  double memory_gib = 0;  // usable memory
};

// The whole GPU with MIG off: every SM (more than the 7g profile holds on A100 and H100) and
// all of its memory.
Slice WholeGpuSlice(const model::GpuSpec& gpu, const GpuMigSpec& mig);
// A MIG instance of `profile` placed at `start`.
Slice InstanceSlice(const GiProfile& profile, int start);
// Every instance of `layout`, in its order. REQUIRES: ValidateLayout(mig, layout) passed.
std::vector<Slice> LayoutSlices(const GpuMigSpec& mig, const Layout& layout);

// A job on a slice: its workload's fit and batch size.
struct SliceJob {
  WorkloadFit fit = {};
  int batch = 0;
  Slice slice = {};
};

struct InstanceRate {
  double samples_per_s = 0;
  double busy = 0;             // fraction of the time a kernel of this job runs
  double dynamic_power_w = 0;  // its work power plus its SM share of the chip's active power
};

// Steady state of a set of jobs running side by side.
struct OperatingPoint {
  core::Megahertz clock{0};  // shared SM clock
  double power_w = 0;        // whole GPU, idle included
  bool power_limited = false;
  std::vector<InstanceRate> jobs = {};  // in the order given
};

class SliceModel {
 public:
  // `reference` is the GPU the workloads were measured on; `gpu` the one to model (may be the
  // same). Workloads move across GPUs by the ratio of their peak bf16 rates (the SM-bound part)
  // and bandwidths (the rest).
  SliceModel(model::GpuSpec gpu, model::GpuSpec reference, GpuMigSpec mig, core::Watts power_limit);

  const model::GpuSpec& gpu() const { return power_.spec(); }
  const GpuMigSpec& mig() const { return mig_; }
  core::Watts power_limit() const { return power_limit_; }
  core::Watts idle_power() const { return power_.spec().idle_power; }

  // Memory a job needs: the fitted footprint plus allocator slack and the CUDA context.
  double FootprintGib(const WorkloadFit& fit, int batch) const;
  // Whether that footprint fits the slice's memory (cheap: the planner's search asks often).
  bool Fits(const WorkloadFit& fit, int batch, const Slice& slice) const;
  // As Fits, with a kOutOfRange error naming the need and the slice's memory when it does not.
  [[nodiscard]] core::Status CheckFits(const WorkloadFit& fit, int batch, const Slice& slice) const;
  double IterationSeconds(const WorkloadFit& fit, int batch, const Slice& slice,
                          core::Megahertz clock) const;
  // The shared clock (highest that keeps the whole GPU under the power limit) and each job's
  // rate and power there. An empty set gives the idle GPU.
  OperatingPoint Solve(std::span<const SliceJob> jobs) const;

  // Energy per unit of work here relative to the reference GPU: the ratio of their saturated SM
  // and memory power per peak FLOP/s (1 on the reference GPU itself).
  double EnergyScale() const;

 private:
  model::GpuPowerModel power_;  // the modeled GPU's spec, DVFS law and idle power
  model::GpuSpec reference_;
  GpuMigSpec mig_;
  core::Watts power_limit_;
  std::vector<core::Megahertz> clocks_;  // highest first
};

// Allocator slack and the per-process CUDA context the framework's peak-allocated figure leaves
// out (stated assumptions; docs/mig.md).
inline constexpr double kAllocatorSlack = 1.10;
inline constexpr double kCudaContextGib = 0.5;

}  // namespace headroom::mig

#endif  // HEADROOM_MIG_SLICE_MODEL_H_
