// What the slice model derives from each measured training workload on one GPU at its default
// batch: the fit, the memory it needs, and its rate on the whole GPU and on the GPU's smallest
// MIG instance (`headroom mig workloads`). Pure; thread-compatible.
#ifndef HEADROOM_MIG_WORKLOAD_SUMMARY_H_
#define HEADROOM_MIG_WORKLOAD_SUMMARY_H_

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mig/slice_model.h"
#include "mig/training_workload.h"

namespace headroom::mig {

struct WorkloadSummary {
  std::string workload = {};
  int batch = 0;  // the workload's default
  WorkloadFit fit = {};
  double footprint_gib = 0;
  double whole_gpu_samples_per_s = 0;  // at the maximum SM clock, as every rate here
  std::optional<double> smallest_instance_samples_per_s = {};  // absent: it does not fit
};

struct WorkloadsOnGpu {
  std::string gpu = {};                // the MIG catalog's name
  std::string smallest_instance = {};  // the profile listed first, e.g. "1g.18gb"
  std::vector<WorkloadSummary> workloads = {};
};

// `fits[i]` is FitWorkload of `workloads[i]`. REQUIRES: equal sizes; the GPU has a MIG profile.
WorkloadsOnGpu SummarizeWorkloads(const SliceModel& model,
                                  std::span<const MeasuredWorkload> workloads,
                                  std::span<const WorkloadFit> fits);

}  // namespace headroom::mig

#endif  // HEADROOM_MIG_WORKLOAD_SUMMARY_H_
