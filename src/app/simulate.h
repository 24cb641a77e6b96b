// What `headroom simulate` does below its flags: one row simulation of a policy, with the
// uncapped row (policy none) on the same servers and trace run beside it on a second thread when
// the report's comparison is wanted or the scenario lowers the budget (the cost of meeting it), and
// the --out directory written as simulate_dir.h reads it (requests streamed to requests.csv as they
// complete, so memory stays flat in trace length).
#ifndef HEADROOM_APP_SIMULATE_H_
#define HEADROOM_APP_SIMULATE_H_

#include <atomic>
#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "app/row_scenario.h"
#include "core/result.h"
#include "report/plan_report.h"
#include "report/simulate_dir.h"
#include "sim/capacity_planner.h"

namespace headroom::app {

// Where `simulate --report` writes when no --out is given.
inline constexpr const char* kDefaultSimulateDir = "headroom-simulate";

struct SimulateRequest {
  ScenarioRequest scenario = {};
  std::string trace = {};  // as --trace; empty: the scenario's workload
  std::string policy = "polca";
  int servers = 0;                    // 0: the scenario's (or --oversubscription's)
  std::string oversubscription = {};  // "30%": servers beyond the provisioned row
  bool per_iteration = false;         // one event per decode iteration (no macro steps)
  bool as_recorded = false;           // replay the --trace log as recorded
  bool token_energy = false;          // sim::RunOptions::attribute_token_energy
  std::string out = {};               // empty: nothing written (kDefaultSimulateDir with report)
  bool report = false;       // the uncapped row beside it, and report.html written into out
  std::string version = {};  // summary.json's
  const std::atomic<bool>* stop = nullptr;
  std::function<void(double)> progress = {};                // of the policy's run
  std::function<void(const std::string&)> on_warning = {};  // a plot the report could not draw
};

struct SimulateResult {
  sim::RowResult result;
  // The uncapped row on the same servers and trace, where it ran (--report, a budget schedule).
  std::optional<sim::RowResult> uncapped = {};
  nlohmann::ordered_json summary;          // summary.json (also what --json prints)
  std::string out_dir = {};                // where it was written; empty: nowhere
  std::optional<std::string> report = {};  // report.html's path
};

// kInvalidArgument naming the flag for bad input, or the directory when it cannot be written;
// kUnavailable naming the file when a write fails; the simulation's own errors (kCancelled on
// stop).
[[nodiscard]] core::Result<SimulateResult> Simulate(const SimulateRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_SIMULATE_H_
