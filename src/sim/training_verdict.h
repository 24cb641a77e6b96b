// The training row's verdict: each mitigation's run judged against the grid's limits, its costs
// relative to no mitigation, and the choice (within every limit at the least throughput cost,
// then the least energy cost), or the limits no mitigation meets. Plain values; the judgement is
// pure. Thread-compatible.
#ifndef HEADROOM_SIM_TRAINING_VERDICT_H_
#define HEADROOM_SIM_TRAINING_VERDICT_H_

#include <optional>
#include <string>
#include <vector>

#include "sim/training_row.h"
#include "sim/training_scenario.h"

namespace headroom::sim {

struct BrokenLimit {
  std::string limit = {};  // "ramp", "0.1-2 Hz amplitude"
  std::string text = {};   // "ramp 31.2 kW/s > 20.0 kW/s"
};

struct MitigationOutcome {
  Mitigation mitigation = {};
  TrainingRowRun run = {};
  double throughput_change = 0;  // iterations per hour against the first (none), -0.05: 5% fewer
  double energy_change = 0;      // energy per iteration against the first
  std::vector<BrokenLimit> broken = {};
  bool within() const { return broken.empty(); }
};

struct TrainingRowVerdict {
  TrainingScenario scenario = {};  // with the servers and seed simulated
  std::string gpu = {};
  double gpu_tdp_w = 0;
  std::vector<MitigationOutcome> outcomes = {};  // the scenario's order
  std::optional<std::size_t> chosen = {};
  // When none is chosen: each limit ("ramp", "3-30 Hz share") that no mitigation meets.
  std::vector<std::string> unmet = {};
};

// The limits `run` breaks.
std::vector<BrokenLimit> LimitsBroken(const TrainingLimits& limits, const TrainingRowRun& run);

// Fills each outcome's changes and broken limits, then the choice. REQUIRES: outcomes non-empty,
// the first the baseline.
void Judge(TrainingRowVerdict& verdict);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_TRAINING_VERDICT_H_
