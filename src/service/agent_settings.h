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
  // The engine's latency histograms (the energy saver's signal; service/engine_metrics.h says
  // why these names).
  std::string engine_ttft_metric = "vllm:time_to_first_token_seconds";
  std::string engine_itl_metric = "vllm:inter_token_latency_seconds";
  std::string engine_iterations_metric = "vllm:iteration_tokens_total";  // the J/token fit's
  // The engine proxy (service/engine_proxy.h): listen here (empty: no proxy) and pass every
  // request to the engine at engine_url (empty: engine_metrics' scheme, host and port). With the
  // energy saver it is the signal of the prefill boost.
  std::string engine_proxy = {};
  std::string engine_url = {};
  // Requests the proxy holds at once (a streamed answer holds one for its whole generation);
  // more wait for a worker.
  int engine_proxy_workers = 256;
  // On stop, how long the proxy may drain (new requests refused, the answers under way finished)
  // before the agent restores its GPUs and exits; "0s": cut them at once. Within systemd's
  // TimeoutStopSec (30 s in deploy/systemd) with time to spare for the restore.
  std::string engine_proxy_drain = "20s";
  // The energy saver (policy/energy_saver.h): on when both SLOs are given (durations); it needs
  // engine_metrics.
  std::string energy_saver_itl_p50 = {};
  std::string energy_saver_ttft_p99 = {};
  double energy_saver_margin = 0.1;  // lower only while both are within (1 - margin) of the SLO
  std::string energy_saver_settle = "30s";
  double energy_saver_floor_percent = 50;  // % of the GPU's highest clock
};

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_AGENT_SETTINGS_H_
