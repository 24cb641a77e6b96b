// The directory `headroom simulate --out DIR` writes, read back for its report:
//   summary.json           SimulationJson plus "inputs" (SimulateInputsJson) and, when the
//                          uncapped row was simulated beside the policy, "uncapped" (RunJson)
//   power.csv              time_s,row_w,row_frac,state per metered sample
//   requests.csv           one line per request (arrival_s,priority,...,ttft_s,tbt_s,e2e_s)
//   uncapped-requests.csv  the same for the uncapped row (with "uncapped" only)
// Reading is strict: a missing file or field is an error naming the file and the field.
// Thread-compatible.
#ifndef HEADROOM_REPORT_SIMULATE_DIR_H_
#define HEADROOM_REPORT_SIMULATE_DIR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "report/plan_report.h"
#include "sim/capacity_planner.h"

namespace headroom::report {

inline constexpr const char* kSimulateSummaryFile = "summary.json";
inline constexpr const char* kSimulatePowerFile = "power.csv";
inline constexpr const char* kRequestsFile = "requests.csv";
inline constexpr const char* kUncappedRequestsFile = "uncapped-requests.csv";

struct SimulateInputs {
  std::string scenario = {};
  std::string description = {};
  std::string scenario_source = {};  // the file it was read from, or "built-in"
  std::string trace = {};            // as --trace; empty: the scenario's workload
  std::uint64_t seed = 0;
  std::string policy = {};
  int servers = 0;
  int provisioned_servers = 0;  // the scenario's row
  std::string version = {};     // headroom's
  std::vector<std::string> overrides = {};
  double t1_frac = 0;  // the policies' T1 and T2 thresholds, fractions of the budget
  double t2_frac = 0;
};

nlohmann::ordered_json SimulateInputsJson(const SimulateInputs& inputs);

// Per-request latencies of one run, per priority, in seconds.
struct RequestLatencies {
  std::vector<double> hp_e2e_s = {}, lp_e2e_s = {}, hp_ttft_s = {}, lp_ttft_s = {};
};

struct SimulateReport {
  SimulateInputs inputs;
  sim::RunSummary run;
  double duration_s = 0;  // arrival span
  std::optional<sim::RunSummary> uncapped = {};
  PowerTrace power;  // power.csv in about 2,000 windows, brakes where the state enters "brake"
  RequestLatencies requests;
  std::optional<RequestLatencies> uncapped_requests = {};
};

// kNotFound when `dir` or a file is missing; kInvalidArgument naming the file and the field
// (or line and column) when a file does not hold what `simulate --out` writes.
[[nodiscard]] core::Result<SimulateReport> ReadSimulateDir(const std::string& dir);

// "How does polca run 48 servers in the row's 312 kW budget?"
std::string SimulateQuestion(const SimulateReport& report);
// "polca on 48 servers: peak 97.0% of budget, HP P50 +0.4%, LP P50 +2.1%, 0 brakes": latency
// changes against the uncapped row when it was simulated, absolute P50s otherwise.
std::string SimulateAnswer(const SimulateReport& report);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_SIMULATE_DIR_H_
