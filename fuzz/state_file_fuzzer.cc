// The agent's state file, read at start (it may be left half-written or edited by hand). What
// parses writes back to the same settings.
#include "fuzz/fuzz_support.h"
#include "service/state_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace headroom::service;
  auto originals = OriginalsFromJson(std::string(headroom::fuzz::Text(data, size)));
  if (!originals) return 0;
  auto again = OriginalsFromJson(OriginalsToJson(*originals));
  HEADROOM_CHECK(again.has_value()) << again.error().message();
  HEADROOM_CHECK(OriginalsToJson(*again) == OriginalsToJson(*originals));
  return 0;
}
