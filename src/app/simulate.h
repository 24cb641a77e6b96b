// What `headroom simulate` does below its flags: one row simulation of a policy, with the
// uncapped row (policy none) on the same servers and trace run beside it on a second thread when
// the report's comparison is wanted, and the --out directory written as simulate_dir.h reads it
// (requests streamed to requests.csv as they complete, so memory stays flat in trace length).
#ifndef HEADROOM_APP_SIMULATE_H_
#define HEADROOM_APP_SIMULATE_H_

#include <atomic>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "report/plan_report.h"
#include "report/simulate_dir.h"
#include "sim/capacity_planner.h"

namespace headroom::app {

struct SimulateRequest {
  const sim::ResolvedScenario* resolved = nullptr;
  std::string policy = {};
  int servers = 0;
  std::string trace = {};              // as --trace; empty: the scenario's workload
  std::string out_dir = {};            // empty: nothing written
  bool with_uncapped = false;          // REQUIRES: out_dir; the uncapped row beside it
  report::SimulateInputs inputs = {};  // summary.json's "inputs"
  const std::atomic<bool>* stop = nullptr;
  std::function<void(double)> progress = {};  // of the policy's run
};

struct Simulation {
  sim::RowResult result;
  nlohmann::ordered_json summary;  // summary.json (also what --json prints)
};

// kInvalidArgument naming the directory when it cannot be written; kUnavailable naming the file
// when a write fails; the simulation's own errors (kCancelled on stop).
[[nodiscard]] core::Result<Simulation> SimulateRow(const SimulateRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_SIMULATE_H_
