// ControllerConfig: one row controller's settings, read strictly from its YAML file
// (deploy/controller/row.yaml documents every key): the row's budget, the policy and its
// constants, the control timing, where row power comes from, and every server's agent. Errors
// name the file, line and field. Token files are read at load, so a missing token fails the
// start, not the first command. Values are immutable after load; thread-compatible.
#ifndef HEADROOM_SERVICE_CONTROLLER_CONFIG_H_
#define HEADROOM_SERVICE_CONTROLLER_CONFIG_H_

#include <string>
#include <string_view>
#include <vector>

#include "catalog/hardware_catalog.h"
#include "core/result.h"
#include "core/time.h"
#include "core/units.h"
#include "model/gpu_spec.h"
#include "policy/budget_schedule.h"
#include "policy/policy_params.h"
#include "policy/row_policy.h"
#include "service/budget_request.h"

namespace headroom::service {

struct AgentEndpoint {
  std::string name;
  std::string url;  // http://HOST:PORT or https://HOST:PORT
  std::string token;
  policy::ServerPriority priority = policy::ServerPriority::kLow;
  model::ServerSpec server;  // rated maximum, non-GPU power, GPU type
};

enum class TelemetrySource { kAgents, kPrometheus, kCommand };
std::string_view TelemetrySourceName(TelemetrySource source);

struct TelemetryConfig {
  TelemetrySource source = TelemetrySource::kAgents;
  std::string url;                   // prometheus: the server's base URL
  std::string query;                 // prometheus: a PromQL expression giving row watts
  std::vector<std::string> command;  // command: argv of a program that prints watts
  core::Duration timeout{std::chrono::milliseconds(500)};  // default: control.agent_timeout
};

// The row's answer to the grid (row.yaml's `grid:` section): a lower budget asked by a signal
// (PUT /v1/budget) or by a daily schedule.
struct GridConfig {
  // PUT and DELETE /v1/budget's bearer token (grid.token_file); empty: the endpoints are off.
  std::string token;
  GridLimits limits;
  policy::BudgetSchedule schedule;  // daily windows, in UTC
  // The row's ramp limit (policy::ControlSettings::ramp_up_w_per_s; 0: none) and its window.
  double ramp_up_w_per_s = 0;
  core::Duration ramp_window{std::chrono::seconds(10)};
};

struct ControllerConfig {
  std::string row_name;
  core::Watts budget{0};
  std::string policy_name = "polca";
  policy::PolicyParams params;  // the GPU type's defaults with the file's overrides
  model::GpuSpec gpu;           // the row's GPU type (every agent's servers share it)
  core::Duration period{std::chrono::seconds(1)};
  core::Duration lease_ttl{std::chrono::seconds(30)};
  // How long one step waits for an agent's answer: a slow agent is skipped (counted as
  // unreachable this step), never waited for.
  core::Duration agent_timeout{std::chrono::milliseconds(500)};
  // After a (re)start, caps the agents already hold are not lifted for this long, so that a
  // fresh policy (which starts in its lowest state) cannot uncap a row that needed them.
  core::Duration restart_hold{std::chrono::seconds(30)};
  // A row over budget for this long while caps are not confirmed on some server: every
  // reachable server is braked.
  core::Duration escalate_after{std::chrono::seconds(10)};
  // A reachable agent whose caps differ from its target this long is named unconverged
  // (status, audit, metric, a warning) and counts as unconfirmed for escalation.
  core::Duration converge_within{std::chrono::seconds(60)};
  TelemetryConfig telemetry;
  std::vector<AgentEndpoint> agents;
  GridConfig grid;
  // PEM file of the CA that signed the agents' (and the meter's) HTTPS certificates; empty:
  // the system's trusted CAs. Certificates are always verified.
  std::string tls_ca_file;
};

// Parses `text` (from `source`, named in errors). Server types come from `catalog`; every
// agent's servers must share one GPU type (the policy's clocks are per GPU type).
[[nodiscard]] core::Result<ControllerConfig> ParseControllerConfig(
    std::string_view text, const std::string& source, const catalog::HardwareCatalog& catalog);
// The groups of agents that share one token (each group named by its agents' names, in the
// file's order): a node holding that token can command the others.
std::vector<std::vector<std::string>> AgentsSharingTokens(const ControllerConfig& config);

[[nodiscard]] core::Result<ControllerConfig> LoadControllerConfig(
    const std::string& path, const catalog::HardwareCatalog& catalog);

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_CONTROLLER_CONFIG_H_
