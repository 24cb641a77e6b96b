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
};

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_AGENT_SETTINGS_H_
