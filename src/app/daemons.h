// What `headroom agent` and `headroom controller` do below their flags: compose a daemon (the
// backend's GPUs, the catalog, service::Agent and its HTTP API; or the row's config, one link per
// agent, the row meter, service::Controller and its API) and run it until `stop` turns true.
// Compiled into headroom_app_daemons, the only part of app/ linked against the HTTP and TLS stack
// (service/): only headroom-daemon links it. Not thread-safe (a daemon's start-up).
#ifndef HEADROOM_APP_DAEMONS_H_
#define HEADROOM_APP_DAEMONS_H_

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include "app/context.h"
#include "core/result.h"
#include "service/agent_config.h"
#include "service/agent_settings.h"

namespace headroom::app {

// A line for the daemon's stdout ("listening on HOST:PORT", the controller's --check summary).
using PrintLine = std::function<void(const std::string& line)>;

struct AgentRequest {
  std::string catalog_dir = {};  // empty: the built-in catalog
  BackendOptions backend = {};
  service::AgentSettingsText settings = {};
  std::optional<double> failsafe_sm_clock_mhz = {};
  std::string sim_load_file = {};  // the sim backend's load, re-read when it changes
  std::optional<service::PowerSmoothingConfig> power_smoothing = {};  // agent.yaml's section
  const std::atomic<bool>* stop = nullptr;
  // Asked again to stop: the engine proxy's drain ends at once (AgentDaemonExtras::stop_at_once).
  const std::atomic<bool>* stop_at_once = nullptr;
  PrintLine print = {};
};

// The agent's YAML config file (--config), read and parsed; errors name the file.
[[nodiscard]] core::Result<service::AgentConfigFile> ReadAgentConfig(const std::string& path);

// Runs the agent until `stop`; the GPUs restored on the way out. Errors before it serves; then
// false when it ended on an error it logged.
[[nodiscard]] core::Result<bool> RunAgent(const AgentRequest& request);

struct ControllerRequest {
  std::string catalog_dir = {};  // empty: the built-in catalog
  std::string config = {};       // row.yaml
  std::string listen = "127.0.0.1:9500";
  std::string audit_log = {};
  bool dry_run = false;
  bool check = false;  // read and check the config, print its summary, run nothing
  std::string tls_cert = {};
  std::string tls_key = {};
  const std::atomic<bool>* stop = nullptr;
  PrintLine print = {};
};

// Steps the row once per control period until `stop`. On exit it changes nothing: the agents
// keep their caps until their leases run out, then apply their failsafe.
[[nodiscard]] core::Status RunController(const ControllerRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_DAEMONS_H_
