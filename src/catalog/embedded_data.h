// The data/hardware/*.yaml, data/models/*.yaml and data/mig/*.yaml files (and the other catalog
// data, and the data/traces/*.csv request traces) compiled into the binary (generated sources).
// Thread-safe.
#ifndef HEADROOM_CATALOG_EMBEDDED_DATA_H_
#define HEADROOM_CATALOG_EMBEDDED_DATA_H_

#include <span>

#include "core/embedded_file.h"

namespace headroom::catalog {

std::span<const core::EmbeddedFile> EmbeddedHardwareFiles();
std::span<const core::EmbeddedFile> EmbeddedModelFiles();
std::span<const core::EmbeddedFile> EmbeddedFitFiles();
std::span<const core::EmbeddedFile> EmbeddedProfileFiles();
std::span<const core::EmbeddedFile> EmbeddedWorkloadFiles();
std::span<const core::EmbeddedFile> EmbeddedTraceFiles();
std::span<const core::EmbeddedFile> EmbeddedScenarioFiles();
std::span<const core::EmbeddedFile> EmbeddedMigFiles();
std::span<const core::EmbeddedFile> EmbeddedValidationFiles();

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_EMBEDDED_DATA_H_
