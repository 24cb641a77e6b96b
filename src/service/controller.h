// Controller: the row controller daemon's I/O around policy::RowController (the step the row
// simulator runs too: conservative counting, restart hold, escalation, change detection, brake
// events), one Step() per control period, independent of HTTP, files and the real clock (the
// daemon in cli/controller_command.cc supplies them). Each step: collect the previous step's
// answers (retrying failures with exponential backoff), poll every agent in parallel for at most
// agent_timeout (a slow or dead agent is skipped, never waited for), read the row meter, run the
// row controller's step, send each agent only what changed or a lease renewal, and emit one
// audit record and the status and metrics.
//
// Thread-safety: Step() from one thread; Status() and Metrics() from any thread.
#ifndef HEADROOM_SERVICE_CONTROLLER_H_
#define HEADROOM_SERVICE_CONTROLLER_H_

#include <atomic>
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
#include "policy/row_controller.h"
#include "policy/row_policy.h"
#include "service/agent_link.h"
#include "service/controller_config.h"
#include "service/grid_budget.h"
#include "service/row_meter.h"
#include "telemetry/prometheus_text.h"

namespace headroom::service {

struct ControllerOptions {
  bool dry_run = false;  // decide and log, send nothing
  // Makes request ids unique across controller restarts (agents refuse a reused id with
  // another body); the daemon uses its start time, pid and random bits.
  std::string instance_id = "0";
  // Receives each step's record (the audit log's line); false when it could not be written
  // (disk full): counted in headroom_row_audit_lines_lost_total, and control goes on.
  std::function<bool(const nlohmann::ordered_json&)> audit = {};
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
  // PUT, DELETE and GET /v1/budget (GridBudget), on the calendar clock; the next step applies
  // them.
  [[nodiscard]] core::Result<nlohmann::ordered_json> PutBudget(std::string_view body);
  [[nodiscard]] core::Result<nlohmann::ordered_json> DeleteBudget();
  nlohmann::ordered_json Budget() const EXCLUDES(mu_);
  // PUT and DELETE /v1/budget's token; empty: the endpoints are off.
  const std::string& grid_token() const { return grid_.token(); }
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
    std::string error;            // why the last exchange failed; empty when fine
    policy::ServerCount counted;  // this step's, from the row controller
    std::optional<core::TimePoint> last_ack;
    int failures = 0;
    core::TimePoint retry_at{};
    bool put_confirmed = true;
    std::string sent;              // "caps", "lease" or "" this step
    policy::ServerTargets target;  // this step's
    bool changed = false;          // target differs from what the agent accepted
    bool unconverged = false;      // holds other caps than its target for converge_within
  };

  Controller(ControllerConfig config, std::vector<Server> servers, std::unique_ptr<RowMeter> meter,
             std::unique_ptr<policy::RowPolicy> policy, core::Clock* clock,
             ControllerOptions options);

  nlohmann::ordered_json CollectPuts(core::TimePoint now);
  void PollAgents();
  // What the row controller needs of one server's last exchanges.
  static policy::ServerReport ReportOf(const Server& s);
  policy::RowView ViewOfRow(core::TimePoint now, std::string* source) const;
  // On the first step: which agents could not be reached, in the log and the audit record.
  void NoteUnreachableAtStart(std::vector<std::string>* notes);
  // Takes the step's counts and targets into the servers, with notes for what it found.
  void NoteStep(const policy::RowStep& step, std::vector<std::string>* notes);
  // Names the servers that became unconverged (a warning) or converged again.
  void NoteConvergence(const policy::RowStep& step, std::vector<std::string>* notes);
  void Send(core::TimePoint now);
  // The budget part of the step's record: what was asked, and how the row is meeting a lowered
  // budget (policy::BudgetCompliance, as the simulator measures it).
  nlohmann::ordered_json NoteBudget(const policy::RowStep& step, const GridBudget::InForce& asked,
                                    core::TimePoint now, double row_w);
  nlohmann::ordered_json ServerJson(size_t i) const;
  // The step's metrics, all but the steps counter (Publish adds it under the lock).
  telemetry::PrometheusWriter MetricsOf(const nlohmann::ordered_json& record) const;
  // The budget's metrics, from the step's record["budget"] (NoteBudget).
  void BudgetMetrics(const nlohmann::ordered_json& budget, telemetry::PrometheusWriter& m) const;
  void Publish(const nlohmann::ordered_json& record) EXCLUDES(mu_);

  const ControllerConfig config_;
  GridBudget grid_;
  std::vector<Server> servers_;
  std::unique_ptr<RowMeter> meter_;
  const std::unique_ptr<policy::RowPolicy> policy_;
  policy::RowController row_;  // drives *policy_
  core::Clock* const clock_;
  const ControllerOptions options_;
  const core::TimePoint start_;

  std::future<core::Result<core::Watts>> meter_read_;
  std::optional<core::Watts> meter_value_;
  std::optional<core::TimePoint> meter_time_;
  std::string meter_error_;
  std::uint64_t request_seq_ = 0;
  bool checked_reachability_ = false;  // NoteUnreachableAtStart ran
  std::uint64_t commands_ok_ = 0;
  std::uint64_t commands_failed_ = 0;
  std::uint64_t audit_lines_lost_ = 0;
  // The lowered budget the row is meeting (since when, what), and how.
  std::optional<core::TimePoint> lowered_at_;
  core::Watts lowered_to_{0};
  std::optional<core::TimePoint> last_budget_sample_;
  policy::BudgetCompliance compliance_;

  mutable core::Mutex mu_;
  std::uint64_t steps_ GUARDED_BY(mu_) = 0;
  core::TimePoint last_step_ GUARDED_BY(mu_);
  nlohmann::ordered_json status_ GUARDED_BY(mu_);
  std::string metrics_ GUARDED_BY(mu_);
};

// The meter `telemetry` names; none (a null pointer) for the agents' own reports.
[[nodiscard]] core::Result<std::unique_ptr<RowMeter>> MakeRowMeter(const TelemetryConfig& telemetry,
                                                                   const std::string& ca_file,
                                                                   const core::Clock* clock);

// An instance id for ControllerOptions: calendar seconds and pid alone repeat when the clock is
// set back (a node without a clock source booting at the same time, pid 1 in a container), so
// 32 random bits follow.
std::string NewInstanceId(const core::Clock& clock);

// Steps the controller once per `period` on a fixed grid from now, so that a slow step does not
// shift every later one (steps that overran are skipped, with a warning), until `stop`.
void RunControlLoop(Controller& controller, core::Clock& clock, core::Duration period,
                    const std::atomic<bool>& stop);

}  // namespace headroom::service

#endif  // HEADROOM_SERVICE_CONTROLLER_H_
