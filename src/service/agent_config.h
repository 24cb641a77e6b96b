// AgentConfigFile: the node agent's optional YAML config (`headroom agent --config`, keys in
// docs/agent.md), read strictly: unknown or duplicate keys, wrong types, a backend other than sim
// or nvml, a priority policy::ParsePriority does not take, durations that do not parse and
// power_smoothing values out of range are errors naming the file, line and key. Every key is
// optional; the CLI lets flags given on the command line win. Pure (parses text); a value type.
#ifndef HEADROOM_SERVICE_AGENT_CONFIG_H_
#define HEADROOM_SERVICE_AGENT_CONFIG_H_

#include <optional>
#include <string>
#include <string_view>

#include "core/result.h"
#include "gpu/device.h"

namespace headroom::service {

// The config's `power_smoothing:` section: the preset to activate at start on every GPU that has
// power smoothing (Blackwell and later), and parameters of that preset to set first.
struct PowerSmoothingConfig {
  int profile = 0;  // 0..4 (NVML has at most 5 presets); each GPU checks its own count
  gpu::PowerSmoothingUpdate update = {};
};

// The config's `energy_saver:` section (the flags --energy-saver-*): the SLOs are required.
struct EnergySaverConfigFile {
  std::string itl_p50 = {};   // a duration > 0
  std::string ttft_p99 = {};  // a duration > 0
  std::optional<double> margin = {};
  std::optional<std::string> settle = {};  // a duration >= 0
  std::optional<double> floor_percent = {};
};

struct AgentConfigFile {
  std::optional<std::string> backend;  // "sim" or "nvml"
  std::optional<std::string> sim_gpu;
  std::optional<int> sim_count;  // 1..1024
  std::optional<std::string> sim_load;
  std::optional<std::string> sim_load_file;
  std::optional<std::string> gpus;
  std::optional<std::string> listen;
  std::optional<std::string> token_file;
  std::optional<std::string> state_file;
  std::optional<std::string> priority;         // "hp" or "lp" (also read: "high", "low")
  std::optional<std::string> actuation_delay;  // a duration >= 0
  std::optional<std::string> sample_interval;  // a duration > 0
  std::optional<double> failsafe_sm_clock_mhz;
  std::optional<std::string> tls_cert;
  std::optional<std::string> tls_key;
  std::optional<std::string> engine_metrics;
  std::optional<std::string> engine_metrics_interval;  // a duration > 0
  std::optional<std::string> engine_proxy;             // HOST:PORT
  std::optional<std::string> engine_url;
  std::optional<int> engine_proxy_workers;        // 1..4096
  std::optional<std::string> engine_proxy_drain;  // a duration
  std::optional<std::string> engine_prompt_tokens_metric;
  std::optional<std::string> engine_generation_tokens_metric;
  std::optional<std::string> engine_running_metric;
  std::optional<std::string> engine_waiting_metric;
  std::optional<std::string> engine_ttft_metric;
  std::optional<std::string> engine_itl_metric;
  std::optional<std::string> engine_iterations_metric;
  std::optional<PowerSmoothingConfig> power_smoothing;
  std::optional<EnergySaverConfigFile> energy_saver;
};

[[nodiscard]] core::Result<AgentConfigFile> ParseAgentConfig(std::string_view text,
                                                             const std::string& source);

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_AGENT_CONFIG_H_
