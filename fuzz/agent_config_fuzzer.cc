// The agent's config file (`headroom agent --config`).
#include "fuzz/fuzz_support.h"
#include "service/agent_config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)headroom::service::ParseAgentConfig(headroom::fuzz::Text(data, size), "agent.yaml");
  return 0;
}
