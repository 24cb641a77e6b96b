// Controller: the row controller's logic, one Step() per control period, independent of HTTP,
// files and the real clock (the daemon in cli/controller_command.cc supplies them). Each step:
// poll every agent in parallel for at most agent_timeout (a slow or dead agent is skipped and
// counted conservatively, never waited for), read row power (agents' sum or an external
// meter), run the row policy (the same policy/ code the simulator runs), send each agent only
// what changed or a lease renewal, and collect the previous step's answers (retrying failures
// with exponential backoff). It escalates to the brake when the row stays over budget while
// caps are not confirmed, holds caps the agents already had for restart_hold after a (re)start,
// re-sends to an agent that lost its caps (restart), and emits one audit record per step.
//
// Thread-safety: Step() from one thread; Status() and Metrics() from any thread.
#ifndef HEADROOM_SERVICE_CONTROLLER_H_
#define HEADROOM_SERVICE_CONTROLLER_H_

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "core/thread_annotations.h"
#include "core/time.h"
#include "policy/row_policy.h"
#include "service/agent_link.h"
#include "service/controller_config.h"
#include "service/row_meter.h"

namespace headroom::service {

struct ControllerOptions {
  bool dry_run = false;  // decide and log, send nothing
  // Makes request ids unique across controller restarts (agents refuse a reused id with
  // another body); the daemon uses its start time, pid and random bits.
  std::string instance_id = "0";
  // Receives each step's record (the audit log's line); false when it could not be written
  // (disk full): counted in headroom_row_audit_lines_lost_total, and control goes on.
  std::function<bool(const nlohmann::ordered_json&)> audit;
};

class Controller {
 public:
  // links: one per config.agents entry, same order. meter: required for telemetry sources
  // prometheus and command, ignored for agents. REQUIRES: clock outlives the Controller.
  [[nodiscard]] static core::Result<std::unique_ptr<Controller>> Create(
      ControllerConfig config, std::vector<std::unique_ptr<AgentLink>> links,
      std::unique_ptr<RowMeter> meter, core::Clock* clock, ControllerOptions options);
  // Waits for answers still in flight (bounded by the links' timeouts).
  ~Controller();

  // One control period; returns its audit record (also passed to options.audit).
  nlohmann::ordered_json Step() EXCLUDES(mu_);

  // Waits until every command sent so far has been answered (or timed out); the answers are
  // still read by the next Step(). For tests and for a clean shutdown.
  void WaitForCommands();

  nlohmann::ordered_json Status() const EXCLUDES(mu_);
  std::string Metrics() const EXCLUDES(mu_);
  // Steps so far (0 before the first).
  std::uint64_t steps() const EXCLUDES(mu_);
  // Time since the last step ended (since creation before the first): a stuck loop grows it.
  core::Duration SinceLastStep() const EXCLUDES(mu_);

 private:
  struct Server {
    AgentEndpoint endpoint;
    std::unique_ptr<AgentLink> link;
    std::future<core::Result<AgentReport>> get;
    std::future<core::Result<CapsOutcome>> put;
    CapsCommand put_command;            // what `put` carries
    std::optional<AgentReport> report;  // the latest answer
    bool reachable = false;
    std::string error;  // why the last exchange failed; empty when fine
    core::Watts last_counted{0};
    std::string counted_as;
    core::Watts counted{0};
    // What the agent holds as far as we know: synced from its state, then what it accepted.
    std::optional<policy::ServerTargets> accepted;
    std::optional<policy::ServerTargets> held_at_start;  // for restart_hold
    std::optional<core::TimePoint> last_ack;
    int failures = 0;
    core::TimePoint retry_at{};
    bool put_confirmed = true;
    std::string sent;  // "caps", "lease" or "" this step
    policy::ServerTargets target;
  };

  Controller(ControllerConfig config, std::vector<Server> servers, std::unique_ptr<RowMeter> meter,
             std::unique_ptr<policy::RowPolicy> policy, core::Clock* clock,
             ControllerOptions options);

  nlohmann::ordered_json CollectPuts(core::TimePoint now);
  void PollAgents();
  void CountPower();
  // On the first step: which agents could not be reached, in the log and the audit record.
  void NoteUnreachableAtStart(std::vector<std::string>* notes);
  // Why `s`'s report breaks its server's physics, or "" when it is believable.
  static std::string Implausible(const Server& s);
  void SyncFromReports(std::vector<std::string>* notes);
  void UpdateEscalation(core::TimePoint now, double fraction, std::vector<policy::Event>* events);
  void Send(core::TimePoint now);
  bool Unconfirmed(const Server& s) const;
  nlohmann::ordered_json ServerJson(const Server& s) const;
  void Publish(const nlohmann::ordered_json& record) EXCLUDES(mu_);

  const ControllerConfig config_;
  std::vector<Server> servers_;
  std::unique_ptr<RowMeter> meter_;
  std::unique_ptr<policy::RowPolicy> policy_;
  core::Clock* const clock_;
  const ControllerOptions options_;
  const core::TimePoint start_;

  std::future<core::Result<core::Watts>> meter_read_;
  std::optional<core::Watts> meter_value_;
  std::optional<core::TimePoint> meter_time_;
  std::string meter_error_;
  std::uint64_t request_seq_ = 0;
  std::string state_;
  bool escalated_ = false;
  bool checked_reachability_ = false;  // NoteUnreachableAtStart ran
  std::optional<core::TimePoint> over_since_;
  std::uint64_t brake_events_ = 0;
  std::uint64_t commands_ok_ = 0;
  std::uint64_t commands_failed_ = 0;
  std::uint64_t audit_lines_lost_ = 0;

  mutable core::Mutex mu_;
  std::uint64_t steps_ GUARDED_BY(mu_) = 0;
  core::TimePoint last_step_ GUARDED_BY(mu_);
  nlohmann::ordered_json status_ GUARDED_BY(mu_);
  std::string metrics_ GUARDED_BY(mu_);
};

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_CONTROLLER_H_
