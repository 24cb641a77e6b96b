// The controller's row.yaml (token files named in it are read; a fuzzed path reads nothing
// useful, which is an error like any other).
#include "fuzz/fuzz_support.h"
#include "service/controller_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace headroom;
  (void)service::ParseControllerConfig(fuzz::Text(data, size), "row.yaml", fuzz::Hardware());
  return 0;
}
