// GET /v1/state as the controller reads it from an agent (or from anything answering at its
// address): JSON, then the report's fields.
#include <nlohmann/json.hpp>

#include "fuzz/fuzz_support.h"
#include "service/agent_link.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto json = nlohmann::json::parse(headroom::fuzz::Text(data, size), nullptr,
                                    /*allow_exceptions=*/false);
  if (json.is_discarded()) return 0;
  (void)headroom::service::ParseAgentState(json);
  return 0;
}
