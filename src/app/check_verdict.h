// What `headroom check-verdict` does below its flags: a week's cheap power verdict
// (sim/power_verdict.h) against the exact simulation of the whole week, on every (policy, server
// count, week) case asked for, the unseen weeks' seeds a plan uses, each week also under the
// scenario's stress cases. A plan may take the cheap verdict's "safe" only where this finds no
// week it calls safe that the exact simulator finds a power event in.
#ifndef HEADROOM_APP_CHECK_VERDICT_H_
#define HEADROOM_APP_CHECK_VERDICT_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "app/row_scenario.h"
#include "core/result.h"
#include "sim/power_verdict.h"
#include "sim/run_summary.h"

namespace headroom::app {

struct CheckVerdictRequest {
  ScenarioRequest scenario = {};
  std::string policies = {};  // comma-separated; empty: the scenario's plan.policies
  int servers_from = 0;       // the counts [from, to]
  int servers_to = 0;
  int weeks = 10;      // unseen weeks 1.. (seeds seed + 1000, ...)
  bool stress = true;  // each week also under each of the scenario's stress cases
  int threads = 0;     // cases in parallel; 0: every core
  sim::VerdictOptions verdict = {};
  // A previous check's `--json` output on the same scenario and simulator: each case found there
  // takes its exact week (power event, peak, CPU) from it instead of simulating it again, so that
  // other verdict settings are checked at the verdict's cost alone. Empty: every week simulated.
  std::string exact_from = {};
  const std::atomic<bool>* stop = nullptr;
  std::function<void(int done, int total)> progress = {};
};

struct VerdictCase {
  std::string policy = {};
  int servers = 0;
  std::uint64_t seed = 0;
  std::string stress = {};  // empty: the week as drawn
  sim::RunSummary exact = {};
  sim::RunSummary verdict = {};
  double exact_cpu_s = 0;  // on one core (the thread's CPU time)
  // The verdict's, and where it came near the budget (its whole week decides), the exact's too.
  double verdict_cpu_s = 0;
  bool exact_event = false;
  bool verdict_event = false;
  bool exact_read = false;  // the exact week came from CheckVerdictRequest::exact_from
};

struct CheckVerdictResult {
  std::string scenario = {};
  std::vector<VerdictCase> cases = {};
  int exact_events = 0;
  int false_safe = 0;    // the verdict safe, the exact week not
  int false_unsafe = 0;  // the verdict unsafe, the exact week safe
  int exact_read = 0;    // cases whose exact week came from CheckVerdictRequest::exact_from
  double exact_cpu_s = 0;
  double verdict_cpu_s = 0;
};

// kInvalidArgument naming the flag for a bad count range, week count or policy, or an exact_from
// file that is not a check of the same scenario (naming the file and the field); the
// simulations' errors.
[[nodiscard]] core::Result<CheckVerdictResult> CheckVerdict(const CheckVerdictRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_CHECK_VERDICT_H_
