// Characterization of MIG layouts on the slice model: every instance of a layout runs its own
// copy of one workload (the study's way to compare partitions), and each instance's steady rate,
// attributed power and energy per sample come out beside the whole GPU's. Pure; thread-safe.
#ifndef HEADROOM_MIG_CHARACTERIZE_H_
#define HEADROOM_MIG_CHARACTERIZE_H_

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "mig/layout.h"
#include "mig/slice_model.h"
#include "mig/training_workload.h"

namespace headroom::mig {

// One instance of one layout running one workload.
struct InstanceResult {
  std::string slice = {};  // "3g.71gb@4" or "whole GPU"
  int sm_count = 0;
  double memory_gib = 0;
  bool fits = false;  // false: out of memory, not run
  double samples_per_s = 0;
  double busy = 0;
  double power_activity_w = 0;  // attribution: idle by SM share, the rest by SMs x busy time
  double power_sm_share_w = 0;  // attribution: all by SM share
  double j_per_sample_activity = 0;
  double j_per_sample_sm_share = 0;
};

// A layout running one workload on every instance.
struct LayoutResult {
  std::string layout = {};  // canonical text, or "MIG off"
  std::string workload = {};
  int batch = 0;
  int instances = 0;
  std::vector<InstanceResult> per_instance = {};
  double gpu_samples_per_s = 0;
  double gpu_power_w = 0;
  double gpu_j_per_sample = 0;  // 0 when nothing fits
  double clock_mhz = 0;
  bool power_limited = false;
};

// `layout` nullopt: the whole GPU with MIG off. REQUIRES: layout valid on model.mig().
LayoutResult CharacterizeLayout(const SliceModel& model, const std::optional<Layout>& layout,
                                const MeasuredWorkload& workload, const WorkloadFit& fit,
                                int batch);

// Every workload on every layout, workload-major, each at its default batch. `progress`, when
// set, hears the fraction done and the workload after each result.
// REQUIRES: fits[i] is workloads[i]'s fit; every layout valid on model.mig().
std::vector<LayoutResult> CharacterizeSweep(
    const SliceModel& model, std::span<const MeasuredWorkload> workloads,
    std::span<const WorkloadFit> fits, std::span<const std::optional<Layout>> layouts,
    const std::function<void(double fraction, const std::string& workload)>& progress = {});

// How one workload's whole-GPU throughput and energy per sample change with N equal instances
// (EqualInstanceLayouts), relative to MIG off: (N, ratio), only where every instance fits (a
// half-empty layout says nothing about scaling).
struct EqualInstanceScaling {
  std::string workload = {};
  std::vector<std::pair<double, double>> throughput = {};
  std::vector<std::pair<double, double>> energy = {};
};

// One entry per workload that runs with MIG off, in order.
// REQUIRES: fits[i] is workloads[i]'s fit.
std::vector<EqualInstanceScaling> ScaleWithEqualInstances(
    const SliceModel& model, std::span<const MeasuredWorkload> workloads,
    std::span<const WorkloadFit> fits);

}  // namespace headroom::mig

#endif  // HEADROOM_MIG_CHARACTERIZE_H_
