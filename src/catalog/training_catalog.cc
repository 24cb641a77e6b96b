#include "catalog/training_catalog.h"

#include <fmt/format.h>

#include "catalog/embedded_data.h"
#include "core/yaml_reader.h"

namespace headroom::catalog {

core::Result<TrainingCatalog> TrainingCatalog::Parse(std::string_view text,
                                                     const std::string& source,
                                                     const ModelCatalog& models) {
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader doc, core::YamlReader::Parse(text, source));
  HEADROOM_RETURN_IF_ERROR(doc.CheckKnownKeys({"workloads"}));
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader list, doc.Map("workloads"));
  TrainingCatalog out;
  for (const std::string& name : list.Keys()) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader w, list.Map(name));
    HEADROOM_RETURN_IF_ERROR(w.CheckKnownKeys(
        {"model", "gpus", "tokens_per_gpu", "sync_fraction", "sync_activity", "sync_busy"}));
    model::TrainingWorkload workload;
    workload.name = name;
    HEADROOM_ASSIGN_OR_RETURN(std::string model_name, w.String("model"));
    auto spec = models.Model(model_name);
    if (!spec) return core::Fail(w.ErrorAt("model", spec.error().message()));
    workload.model = **spec;
    HEADROOM_ASSIGN_OR_RETURN(double gpus, w.NumberIn("gpus", 1, 100000));
    workload.gpus = static_cast<int>(gpus);
    HEADROOM_ASSIGN_OR_RETURN(workload.tokens_per_gpu, w.NumberIn("tokens_per_gpu", 1, 1e9));
    HEADROOM_ASSIGN_OR_RETURN(workload.sync_fraction, w.NumberIn("sync_fraction", 0, 0.95));
    HEADROOM_ASSIGN_OR_RETURN(workload.sync_activity, w.NumberIn("sync_activity", 0, 1));
    HEADROOM_ASSIGN_OR_RETURN(workload.sync_busy, w.NumberIn("sync_busy", 0, 1));
    out.workloads_.push_back(std::move(workload));
  }
  return out;
}

core::Result<TrainingCatalog> TrainingCatalog::Embedded() {
  HEADROOM_ASSIGN_OR_RETURN(ModelCatalog models, ModelCatalog::Embedded());
  for (const core::EmbeddedFile& file : EmbeddedWorkloadFiles()) {
    if (std::string_view(file.path).ends_with("/training.yaml")) {
      return Parse(file.parse_text(), std::string(file.path), models);
    }
  }
  return core::Fail(core::Error::Internal("data/workloads/training.yaml is not embedded"));
}

core::Result<model::TrainingWorkload> TrainingCatalog::Workload(std::string_view name) const {
  std::string known;
  for (const auto& w : workloads_) {
    if (w.name == name) return w;
    known += (known.empty() ? "" : ", ") + w.name;
  }
  return core::Fail(core::Error::NotFound(
      fmt::format("unknown training workload '{}' (known: {})", name, known)));
}

}  // namespace headroom::catalog
