// MigCatalog: the MIG GPU-instance profiles of each GPU type, parsed from data/mig/*.yaml
// (compiled into the binary, or read from a directory) into mig::GpuMigSpec. Lookup by GPU name
// or alias, case-insensitive; the hardware catalog's aliases resolve through MigCatalog::Find.
// Immutable once built, so thread-safe.
#ifndef HEADROOM_CATALOG_MIG_CATALOG_H_
#define HEADROOM_CATALOG_MIG_CATALOG_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/hardware_catalog.h"
#include "catalog/source_files.h"
#include "core/result.h"
#include "core/yaml_reader.h"
#include "mig/profile.h"

namespace headroom::catalog {

class MigCatalog {
 public:
  // Parses and checks a set of files, one GPU type each (`kind: mig`).
  [[nodiscard]] static core::Result<MigCatalog> FromFiles(std::span<const SourceFile> files);
  // Every *.yaml file in `dir`.
  [[nodiscard]] static core::Result<MigCatalog> LoadDirectory(const std::string& dir);
  // The catalog compiled into this binary from data/mig.
  [[nodiscard]] static core::Result<MigCatalog> Embedded();

  // By the MIG entry's name or alias; kNotFound listing the known GPUs otherwise.
  [[nodiscard]] core::Result<const mig::GpuMigSpec*> Gpu(std::string_view name) const;
  // As Gpu(), also accepting the hardware catalog's aliases ("a100" -> "a100-80gb-sxm").
  [[nodiscard]] core::Result<const mig::GpuMigSpec*> Find(std::string_view name,
                                                          const HardwareCatalog& hardware) const;

  const std::vector<mig::GpuMigSpec>& gpus() const { return gpus_; }

 private:
  std::vector<mig::GpuMigSpec> gpus_;  // sorted by name
};

[[nodiscard]] core::Result<mig::GpuMigSpec> ParseGpuMigSpec(const core::YamlReader& doc);

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_MIG_CATALOG_H_
