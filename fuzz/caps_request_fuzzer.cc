// The body of PUT /v1/caps, as any client on the agent's port may send it. A request that parses
// canonicalizes to a body that parses to itself (the agent compares repeats by it).
#include "fuzz/fuzz_support.h"
#include "service/caps_request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using headroom::service::ParseCapsRequest;
  auto request = ParseCapsRequest(headroom::fuzz::Text(data, size));
  if (!request) return 0;
  auto again = ParseCapsRequest(request->canonical_body);
  HEADROOM_CHECK(again.has_value()) << again.error().message();
  HEADROOM_CHECK(again->canonical_body == request->canonical_body);
  return 0;
}
