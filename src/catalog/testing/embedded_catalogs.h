// The embedded catalogs' entries by name, the three a validation run reads, loaded once, and the
// first error of parsing one bad catalog file, for the tests of any module. Test-only.
#ifndef HEADROOM_CATALOG_TESTING_EMBEDDED_CATALOGS_H_
#define HEADROOM_CATALOG_TESTING_EMBEDDED_CATALOGS_H_

#include <span>
#include <string>

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/inference_fits.h"
#include "catalog/mig_catalog.h"
#include "catalog/model_catalog.h"
#include "catalog/source_files.h"
#include "catalog/validation_sets.h"

namespace headroom::catalog::testing {

inline const MigCatalog& EmbeddedMig() {
  static const MigCatalog* catalog = [] {
    auto loaded = MigCatalog::Embedded();
    EXPECT_TRUE(loaded) << loaded.error().message();
    return new MigCatalog(loaded.value_or(MigCatalog()));
  }();
  return *catalog;
}

// The hardware, model and engine catalogs compiled into the binary: what a validation run reads.
struct ValidationSuite {
  HardwareCatalog hardware = *HardwareCatalog::Embedded();
  ModelCatalog models = *ModelCatalog::Embedded();
  EngineCatalog engines = *EngineCatalog::Embedded();
  ValidationCatalogs catalogs() const { return {&hardware, &models, &engines}; }
};

inline const ValidationSuite& EmbeddedValidationSuite() {
  static const ValidationSuite suite;
  return suite;
}

inline const model::GpuSpec& A100() {
  static const auto catalog = HardwareCatalog::Embedded();
  return **catalog->Gpu("a100-80gb-sxm");
}

inline const mig::GpuMigSpec& MigGpu(const std::string& gpu) {
  auto spec = EmbeddedMig().Gpu(gpu);
  EXPECT_TRUE(spec) << spec.error().message();
  return **spec;
}

// CatalogType::FromFiles on one file "bad.yaml" holding `text`, which must fail.
template <typename CatalogType>
core::Error ParseError(const std::string& text) {
  const SourceFile file{"bad.yaml", text};
  auto catalog = CatalogType::FromFiles(std::span(&file, 1));
  EXPECT_FALSE(catalog);
  return catalog ? core::Error::Internal("parsed") : catalog.error();
}

}  // namespace headroom::catalog::testing

#endif  // HEADROOM_CATALOG_TESTING_EMBEDDED_CATALOGS_H_
