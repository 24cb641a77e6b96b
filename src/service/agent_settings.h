// The node agent's settings as given on the command line or in its config file, before they are
// checked (service/agent_daemon.h). A plain struct: `headroom`, which registers the agent's flags
// but does not link the daemons' HTTP stack, needs only this.
#ifndef HEADROOM_SERVICE_AGENT_SETTINGS_H_
#define HEADROOM_SERVICE_AGENT_SETTINGS_H_

#include <string>

namespace headroom::service {

// The agent's settings as given (flags, or the config file's keys of the same names).
struct AgentSettingsText {
  std::string listen = "127.0.0.1:9400";
  std::string token_file = {};  // required
  std::string state_file = "/var/lib/headroom/agent-state.json";
  std::string priority = "lp";
  std::string actuation_delay = "0s";
  std::string sample_interval = "1s";
  std::string tls_cert = {};
  std::string tls_key = {};
  // The serving engine's Prometheus metrics page (empty: none), scraped every interval for the
  // row policy (service/engine_metrics.h); the metric names default to vLLM's.
  std::string engine_metrics = {};
  std::string engine_metrics_interval = "10s";
  std::string engine_prompt_tokens_metric = "vllm:prompt_tokens_total";
  std::string engine_generation_tokens_metric = "vllm:generation_tokens_total";
  std::string engine_running_metric = "vllm:num_requests_running";
  std::string engine_waiting_metric = "vllm:num_requests_waiting";
};

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_AGENT_SETTINGS_H_
