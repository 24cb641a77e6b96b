#include "service/agent_config.h"

#include <fmt/format.h>

#include "core/parse.h"
#include "core/time.h"
#include "core/yaml_reader.h"
#include "policy/row_policy.h"
#include "service/engine_proxy.h"

namespace headroom::service {
namespace {

core::Status ReadString(const core::YamlReader& yaml, const char* key,
                        std::optional<std::string>* out) {
  HEADROOM_ASSIGN_OR_RETURN(*out, yaml.OptionalString(key));
  return core::Ok();
}

// Checked here as well as for the flag, so that a bad value in the file is named by its line.
core::Status CheckDuration(const core::YamlReader& yaml, const char* key,
                           const std::optional<std::string>& text, bool zero_allowed) {
  if (!text) return core::Ok();
  auto d = core::ParseDuration(*text);
  if (!d) return core::Fail(yaml.ErrorAt(key, d.error().message()));
  if (*d < core::Duration::zero() || (!zero_allowed && *d == core::Duration::zero())) {
    return core::Fail(
        yaml.ErrorAt(key, fmt::format("'{}' must be {} 0", *text, zero_allowed ? ">=" : ">")));
  }
  return core::Ok();
}

core::Status CheckOneOf(const core::YamlReader& yaml, const char* key,
                        const std::optional<std::string>& value, std::string_view a,
                        std::string_view b) {
  if (!value || *value == a || *value == b) return core::Ok();
  return core::Fail(yaml.ErrorAt(key, fmt::format("'{}' is not {} or {}", *value, a, b)));
}

// A rate that is not positive, a floor outside 0-100 % or a negative hysteresis: each an error
// naming the key, since the driver would refuse it at start anyway.
core::Status ReadSmoothingValue(const core::YamlReader& yaml, const char* key, double min,
                                bool min_allowed, double max, std::optional<double>* out) {
  HEADROOM_ASSIGN_OR_RETURN(*out, yaml.OptionalNumber(key));
  if (!*out) return core::Ok();
  const double v = **out;
  if (!(v > min || (min_allowed && v == min)) || !(v <= max)) {
    return core::Fail(yaml.ErrorAt(
        key, fmt::format("{} is outside {}{}, {}]", v, min_allowed ? "[" : "(", min, max)));
  }
  return core::Ok();
}

core::Result<PowerSmoothingConfig> ParsePowerSmoothing(const core::YamlReader& section) {
  HEADROOM_RETURN_IF_ERROR(
      section.CheckKnownKeys({"profile", "floor_percent", "ramp_up_w_per_s", "ramp_down_w_per_s",
                              "ramp_down_hysteresis_ms"}));
  PowerSmoothingConfig c;
  // NVML_POWER_SMOOTHING_MAX_NUM_PROFILES is 5.
  HEADROOM_ASSIGN_OR_RETURN(c.profile, section.IntegerIn("profile", 0, 4));
  // Any rate a GPU's power can plausibly move at: 1 MW/s is far beyond any single GPU.
  constexpr double kMaxRateWPerS = 1e6;
  constexpr double kMaxHysteresisMs = 3.6e6;  // an hour
  gpu::PowerSmoothingUpdate& u = c.update;
  HEADROOM_RETURN_IF_ERROR(
      ReadSmoothingValue(section, "floor_percent", 0, true, 100, &u.floor_percent));
  HEADROOM_RETURN_IF_ERROR(
      ReadSmoothingValue(section, "ramp_up_w_per_s", 0, false, kMaxRateWPerS, &u.ramp_up_w_per_s));
  HEADROOM_RETURN_IF_ERROR(ReadSmoothingValue(section, "ramp_down_w_per_s", 0, false, kMaxRateWPerS,
                                              &u.ramp_down_w_per_s));
  HEADROOM_RETURN_IF_ERROR(ReadSmoothingValue(section, "ramp_down_hysteresis_ms", 0, true,
                                              kMaxHysteresisMs, &u.ramp_down_hysteresis_ms));
  return c;
}

// Its SLOs as durations; margin and floor ranged here so that the file's line is named (the
// flags are checked again, for the command line, in ResolveAgentSettings).
core::Result<EnergySaverConfigFile> ParseEnergySaver(const core::YamlReader& section) {
  HEADROOM_RETURN_IF_ERROR(
      section.CheckKnownKeys({"itl_p50", "ttft_p99", "margin", "settle", "floor_percent"}));
  EnergySaverConfigFile c;
  HEADROOM_ASSIGN_OR_RETURN(c.itl_p50, section.String("itl_p50"));
  HEADROOM_ASSIGN_OR_RETURN(c.ttft_p99, section.String("ttft_p99"));
  HEADROOM_RETURN_IF_ERROR(CheckDuration(section, "itl_p50", c.itl_p50, false));
  HEADROOM_RETURN_IF_ERROR(CheckDuration(section, "ttft_p99", c.ttft_p99, false));
  HEADROOM_RETURN_IF_ERROR(ReadString(section, "settle", &c.settle));
  HEADROOM_RETURN_IF_ERROR(CheckDuration(section, "settle", c.settle, true));
  HEADROOM_RETURN_IF_ERROR(
      ReadSmoothingValue(section, "floor_percent", 0, false, 100, &c.floor_percent));
  HEADROOM_ASSIGN_OR_RETURN(c.margin, section.OptionalNumber("margin"));
  if (c.margin && !(*c.margin >= 0 && *c.margin < 1)) {
    return core::Fail(section.ErrorAt("margin", fmt::format("{} is outside [0, 1)", *c.margin)));
  }
  return c;
}

// The keys whose values are strings, each into its field.
core::Status ReadStrings(const core::YamlReader& yaml, AgentConfigFile& c) {
  for (auto [key, field] : {std::pair{"backend", &c.backend},
                            {"sim_gpu", &c.sim_gpu},
                            {"sim_load", &c.sim_load},
                            {"sim_load_file", &c.sim_load_file},
                            {"gpus", &c.gpus},
                            {"listen", &c.listen},
                            {"token_file", &c.token_file},
                            {"state_file", &c.state_file},
                            {"priority", &c.priority},
                            {"actuation_delay", &c.actuation_delay},
                            {"sample_interval", &c.sample_interval},
                            {"tls_cert", &c.tls_cert},
                            {"tls_key", &c.tls_key},
                            {"engine_metrics", &c.engine_metrics},
                            {"engine_metrics_interval", &c.engine_metrics_interval},
                            {"engine_proxy", &c.engine_proxy},
                            {"engine_url", &c.engine_url},
                            {"engine_proxy_drain", &c.engine_proxy_drain},
                            {"engine_prompt_tokens_metric", &c.engine_prompt_tokens_metric},
                            {"engine_generation_tokens_metric", &c.engine_generation_tokens_metric},
                            {"engine_running_metric", &c.engine_running_metric},
                            {"engine_waiting_metric", &c.engine_waiting_metric},
                            {"engine_ttft_metric", &c.engine_ttft_metric},
                            {"engine_itl_metric", &c.engine_itl_metric},
                            {"engine_iterations_metric", &c.engine_iterations_metric}}) {
    HEADROOM_RETURN_IF_ERROR(ReadString(yaml, key, field));
  }
  return core::Ok();
}

}  // namespace

core::Result<AgentConfigFile> ParseAgentConfig(std::string_view text, const std::string& source) {
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader yaml, core::YamlReader::Parse(text, source));
  HEADROOM_RETURN_IF_ERROR(yaml.CheckKnownKeys({"backend",
                                                "sim_gpu",
                                                "sim_count",
                                                "sim_load",
                                                "sim_load_file",
                                                "gpus",
                                                "listen",
                                                "token_file",
                                                "state_file",
                                                "priority",
                                                "actuation_delay",
                                                "sample_interval",
                                                "failsafe_sm_clock_mhz",
                                                "tls_cert",
                                                "tls_key",
                                                "engine_metrics",
                                                "engine_metrics_interval",
                                                "engine_proxy",
                                                "engine_url",
                                                "engine_proxy_workers",
                                                "engine_proxy_drain",
                                                "engine_prompt_tokens_metric",
                                                "engine_generation_tokens_metric",
                                                "engine_running_metric",
                                                "engine_waiting_metric",
                                                "engine_ttft_metric",
                                                "engine_itl_metric",
                                                "engine_iterations_metric",
                                                "power_smoothing",
                                                "energy_saver"}));
  AgentConfigFile c;
  HEADROOM_RETURN_IF_ERROR(ReadStrings(yaml, c));
  if (yaml.Has("sim_count")) {
    HEADROOM_ASSIGN_OR_RETURN(c.sim_count, yaml.IntegerIn("sim_count", 1, 1024));
  }
  if (yaml.Has("engine_proxy_workers")) {
    HEADROOM_ASSIGN_OR_RETURN(c.engine_proxy_workers,
                              yaml.IntegerIn("engine_proxy_workers", 1, kMaxEngineProxyWorkers));
  }
  HEADROOM_ASSIGN_OR_RETURN(c.failsafe_sm_clock_mhz, yaml.OptionalNumber("failsafe_sm_clock_mhz"));
  HEADROOM_RETURN_IF_ERROR(CheckOneOf(yaml, "backend", c.backend, "sim", "nvml"));
  if (c.priority) {
    auto priority = policy::ParsePriority(*c.priority);
    if (!priority) return core::Fail(yaml.ErrorAt("priority", priority.error().message()));
    c.priority = std::string(policy::PriorityName(*priority));
  }
  HEADROOM_RETURN_IF_ERROR(CheckDuration(yaml, "actuation_delay", c.actuation_delay, true));
  HEADROOM_RETURN_IF_ERROR(CheckDuration(yaml, "sample_interval", c.sample_interval, false));
  HEADROOM_RETURN_IF_ERROR(
      CheckDuration(yaml, "engine_metrics_interval", c.engine_metrics_interval, false));
  HEADROOM_RETURN_IF_ERROR(CheckDuration(yaml, "engine_proxy_drain", c.engine_proxy_drain, true));
  if (yaml.Has("power_smoothing")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader section, yaml.Map("power_smoothing"));
    HEADROOM_ASSIGN_OR_RETURN(c.power_smoothing, ParsePowerSmoothing(section));
  }
  if (yaml.Has("energy_saver")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader section, yaml.Map("energy_saver"));
    HEADROOM_ASSIGN_OR_RETURN(c.energy_saver, ParseEnergySaver(section));
  }
  return c;
}

}  // namespace headroom::service
