// TrainingCatalog: the training workloads of data/workloads/training.yaml, each resolved against
// the model catalog. Immutable once built; thread-safe.
#ifndef HEADROOM_CATALOG_TRAINING_CATALOG_H_
#define HEADROOM_CATALOG_TRAINING_CATALOG_H_

#include <string>
#include <string_view>
#include <vector>

#include "catalog/model_catalog.h"
#include "core/result.h"
#include "model/training_model.h"

namespace headroom::catalog {

class TrainingCatalog {
 public:
  [[nodiscard]] static core::Result<TrainingCatalog> Parse(std::string_view text,
                                                           const std::string& source,
                                                           const ModelCatalog& models);
  [[nodiscard]] static core::Result<TrainingCatalog> Embedded();

  [[nodiscard]] core::Result<model::TrainingWorkload> Workload(std::string_view name) const;
  const std::vector<model::TrainingWorkload>& workloads() const { return workloads_; }

 private:
  std::vector<model::TrainingWorkload> workloads_;
};

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_TRAINING_CATALOG_H_
