// HardwareCatalog: the GPU and server types headroom knows, parsed from data/hardware/*.yaml
// (compiled into the binary, or read from a directory). Lookup by canonical name or alias, case
// insensitive. Immutable once built, so thread-safe.
#ifndef HEADROOM_CATALOG_HARDWARE_CATALOG_H_
#define HEADROOM_CATALOG_HARDWARE_CATALOG_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/source_files.h"
#include "core/result.h"
#include "core/yaml_reader.h"
#include "model/gpu_spec.h"

namespace headroom::catalog {

class HardwareCatalog {
 public:
  // Parses and cross-checks a set of files (each one GPU or server, by its `kind`).
  [[nodiscard]] static core::Result<HardwareCatalog> FromFiles(std::span<const SourceFile> files);
  // Every *.yaml file in `dir`.
  [[nodiscard]] static core::Result<HardwareCatalog> LoadDirectory(const std::string& dir);
  // The catalog compiled into this binary from data/hardware.
  [[nodiscard]] static core::Result<HardwareCatalog> Embedded();

  [[nodiscard]] core::Result<const model::GpuSpec*> Gpu(std::string_view name) const;
  [[nodiscard]] core::Result<const model::ServerSpec*> Server(std::string_view name) const;
  // The GPU whose NVML name matches `nvml_name`, if any.
  const model::GpuSpec* GpuByNvmlName(std::string_view nvml_name) const;

  const std::vector<model::GpuSpec>& gpus() const { return gpus_; }
  const std::vector<model::ServerSpec>& servers() const { return servers_; }

 private:
  std::vector<model::GpuSpec> gpus_;
  std::vector<model::ServerSpec> servers_;
};

[[nodiscard]] core::Result<model::GpuSpec> ParseGpuSpec(const core::YamlReader& doc);
[[nodiscard]] core::Result<model::ServerSpec> ParseServerSpec(const core::YamlReader& doc);

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_HARDWARE_CATALOG_H_
