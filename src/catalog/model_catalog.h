// ModelCatalog: the LLM architectures headroom knows, parsed from data/models/*.yaml (compiled
// in, or read from a directory). Each parsed model's derived parameter count is checked against
// its published one, so a typo in a layer size is caught. Immutable once built; thread-safe.
#ifndef HEADROOM_CATALOG_MODEL_CATALOG_H_
#define HEADROOM_CATALOG_MODEL_CATALOG_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/source_files.h"
#include "core/result.h"
#include "core/yaml_reader.h"
#include "model/model_spec.h"

namespace headroom::catalog {

class ModelCatalog {
 public:
  [[nodiscard]] static core::Result<ModelCatalog> FromFiles(std::span<const SourceFile> files);
  [[nodiscard]] static core::Result<ModelCatalog> LoadDirectory(const std::string& dir);
  [[nodiscard]] static core::Result<ModelCatalog> Embedded();

  [[nodiscard]] core::Result<const model::ModelSpec*> Model(std::string_view name) const;
  const std::vector<model::ModelSpec>& models() const { return models_; }

 private:
  std::vector<model::ModelSpec> models_;
};

[[nodiscard]] core::Result<model::ModelSpec> ParseModelSpec(const core::YamlReader& doc);

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_MODEL_CATALOG_H_
