// A user's hardware catalog file (`--catalog DIR`): GPU and server specs.
#include "catalog/hardware_catalog.h"
#include "catalog/source_files.h"
#include "fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace headroom::catalog;
  const SourceFile file{"fuzz.yaml", std::string(headroom::fuzz::Text(data, size))};
  (void)HardwareCatalog::FromFiles(std::span<const SourceFile>(&file, 1));
  return 0;
}
