// What every fuzz target shares: the input as text, and the catalogs compiled into the binary
// (loaded once; parsers that resolve names against a catalog need one). Fuzz-only.
#ifndef HEADROOM_FUZZ_FUZZ_SUPPORT_H_
#define HEADROOM_FUZZ_FUZZ_SUPPORT_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "catalog/hardware_catalog.h"
#include "core/check.h"

namespace headroom::fuzz {

inline std::string_view Text(const uint8_t* data, size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The embedded hardware catalog; a failure to load it is a broken build, not a finding.
inline const catalog::HardwareCatalog& Hardware() {
  static const catalog::HardwareCatalog* hardware = [] {
    auto loaded = catalog::HardwareCatalog::Embedded();
    HEADROOM_CHECK(loaded.has_value()) << loaded.error().message();
    return new catalog::HardwareCatalog(std::move(*loaded));
  }();
  return *hardware;
}

}  // namespace headroom::fuzz

#endif  // HEADROOM_FUZZ_FUZZ_SUPPORT_H_
