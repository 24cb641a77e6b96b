// AgentLink: how the row controller talks to one node agent. The interface lets the
// controller's logic run against in-memory fakes in unit tests; HttpAgentLink is the real one
// (cpp-httplib client, bounded timeouts). ParseAgentState, CapsBody and ParseCapsOutcome are the
// pure halves of the protocol (docs/agent.md), tested on their own. An HttpAgentLink is used by one
// thread at a time per call kind (the controller never overlaps two GETs or two PUTs to one agent).
#ifndef HEADROOM_SERVICE_AGENT_LINK_H_
#define HEADROOM_SERVICE_AGENT_LINK_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "core/time.h"
#include "core/units.h"
#include "policy/row_policy.h"

namespace httplib {
class Client;
}

namespace headroom::service {

// What GET /v1/state says, reduced to what the controller needs.
struct AgentReport {
  std::string priority;      // "hp" / "lp", as the agent was started
  core::Watts gpu_power{0};  // sum over its GPUs
  int gpu_count = 0;
  policy::ServerTargets caps;  // held now; across GPUs, the tightest of each
  bool has_lease = false;      // false: the agent holds no lease (fresh start or caps lifted)
  bool lease_expired = false;
  bool failsafe_active = false;
  bool pending = false;   // accepted changes still waiting for their actuation delay
  bool confirmed = true;  // every GPU reads back what the agent asked of it
  std::string mismatch;   // the first read-back mismatch, when !confirmed
  // Why the reported power cannot be believed (a GPU reading negative); empty when it can.
  // The controller counts such a server at its rated maximum (controller.cc, CountPower).
  std::string implausible;
  // Its serving engine's last window ("serving"), when the agent scrapes one and the section is
  // well formed (a share in [0, 1], counts and age finite and not negative); else absent, and the
  // policy ranks the server by its GPUs' power alone: a bad section never fails the report.
  std::optional<policy::ServingSignal> serving;
};

[[nodiscard]] core::Result<AgentReport> ParseAgentState(const nlohmann::json& state);

// A PUT /v1/caps: new targets (every control given; an absent cap is sent as null, which lifts
// it), or just a lease renewal when targets is nullopt.
struct CapsCommand {
  std::optional<policy::ServerTargets> targets;
  core::Duration lease{0};
  std::string request_id;
};
std::string CapsBody(const CapsCommand& command);

struct CapsOutcome {
  std::string result;      // "applied" or "scheduled"
  bool confirmed = false;  // applied and every GPU read back the target
  std::string mismatch;
};

// One server's targets as the protocol writes them, in caps requests, in /v1/state's caps and in
// the controller's status and audit log: {"sm_clock_mhz": MHz|null, "power_limit_w": W|null,
// "brake": bool}; and read back (a missing key is no cap; wrong types are kInvalidArgument).
nlohmann::ordered_json TargetsJson(const policy::ServerTargets& targets);
[[nodiscard]] core::Result<policy::ServerTargets> TargetsFromJson(const nlohmann::json& caps);

// The outcome of an agent's 200 answer to PUT /v1/caps. Throws nlohmann::json::exception on
// fields of the wrong type (the caller reports it).
CapsOutcome ParseCapsOutcome(const nlohmann::json& answer);

class AgentLink {
 public:
  virtual ~AgentLink() = default;
  [[nodiscard]] virtual core::Result<AgentReport> GetState() = 0;
  // Errors: kUnavailable (no answer, timeout), kPermissionDenied (401), kInvalidArgument /
  // kOutOfRange (400 / 422: the agent refused the values), kFailedPrecondition (409: a request
  // id reused with another body), kInternal otherwise (service/http_status.h).
  [[nodiscard]] virtual core::Result<CapsOutcome> PutCaps(const CapsCommand& command) = 0;
};

// The most an agent's GET /v1/state may send (a real one is ~1 KB per GPU).
inline constexpr size_t kMaxAgentStateBytes = 1024 * 1024;

class HttpAgentLink final : public AgentLink {
 public:
  // url: http://HOST:PORT or https://HOST:PORT (the certificate verified against ca_file, or
  // the system's CAs when it is empty). Each request gives up after `timeout`.
  HttpAgentLink(const std::string& url, std::string token, core::Duration timeout,
                const std::string& ca_file = "");
  ~HttpAgentLink() override;
  core::Result<AgentReport> GetState() override;
  core::Result<CapsOutcome> PutCaps(const CapsCommand& command) override;

 private:
  const std::string url_;
  const std::string token_;
  // Two clients: a state poll and a caps command may be in flight at once.
  std::unique_ptr<httplib::Client> get_client_;
  std::unique_ptr<httplib::Client> put_client_;
};

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_AGENT_LINK_H_
