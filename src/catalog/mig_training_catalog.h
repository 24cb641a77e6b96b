// MigTrainingCatalog: the training workloads measured for MIG planning
// (data/workloads/mig-training.yaml): each workload's measured points on the reference GPU.
// Immutable once built; thread-safe.
#ifndef HEADROOM_CATALOG_MIG_TRAINING_CATALOG_H_
#define HEADROOM_CATALOG_MIG_TRAINING_CATALOG_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "mig/training_workload.h"

namespace headroom::catalog {

class MigTrainingCatalog {
 public:
  [[nodiscard]] static core::Result<MigTrainingCatalog> Parse(std::string_view text,
                                                              const std::string& source);
  [[nodiscard]] static core::Result<MigTrainingCatalog> Embedded();

  // kNotFound listing the known workloads.
  [[nodiscard]] core::Result<mig::MeasuredWorkload> Workload(std::string_view name) const;
  // "all": every workload; else the comma-separated names, in order; Workload's error for an
  // unknown one.
  [[nodiscard]] core::Result<std::vector<mig::MeasuredWorkload>> Select(
      std::string_view names) const;
  const std::vector<mig::MeasuredWorkload>& workloads() const { return workloads_; }
  const std::string& reference_gpu() const { return reference_gpu_; }
  double reference_idle_w() const { return reference_idle_w_; }

 private:
  std::string reference_gpu_;
  double reference_idle_w_ = 0;
  std::vector<mig::MeasuredWorkload> workloads_;
};

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_MIG_TRAINING_CATALOG_H_
