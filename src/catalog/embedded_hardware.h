// The data/hardware/*.yaml files compiled into the binary (generated source). Thread-safe.
#ifndef HEADROOM_CATALOG_EMBEDDED_HARDWARE_H_
#define HEADROOM_CATALOG_EMBEDDED_HARDWARE_H_

#include <span>

#include "core/embedded_file.h"

namespace headroom::catalog {

std::span<const core::EmbeddedFile> EmbeddedFiles();

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_EMBEDDED_HARDWARE_H_
