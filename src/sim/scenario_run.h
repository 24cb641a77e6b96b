// One simulation of a resolved scenario (scenario.h) at a server count under a policy, on its
// own workload (workload.h) or on a given stream of requests. Thread-compatible.
#ifndef HEADROOM_SIM_SCENARIO_RUN_H_
#define HEADROOM_SIM_SCENARIO_RUN_H_

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "sim/request_source.h"
#include "sim/row_simulator.h"
#include "sim/scenario.h"

namespace headroom::sim {

// Runs one simulation of the scenario at `servers` with `policy`.
[[nodiscard]] core::Result<RowResult> RunScenario(const ResolvedScenario& scenario,
                                                  const std::string& policy, int servers,
                                                  const std::string& trace, RunOptions options);
// Fresh policies named `names`, stepped beside a run (RunOptions::shadows): owned by `owned`,
// which must outlive the run. kInvalidArgument for an unknown name.
[[nodiscard]] core::Status AddShadows(const ResolvedScenario& scenario,
                                      const std::vector<std::string>& names,
                                      std::vector<std::unique_ptr<policy::RowPolicy>>* owned,
                                      RunOptions* options);
// The same on a given stream of requests: the scenario's workload at `servers` (e.g. a plan's
// recording of it, sim/recorded_requests.h).
[[nodiscard]] core::Result<RowResult> RunScenarioOn(const ResolvedScenario& scenario,
                                                    const std::string& policy, int servers,
                                                    RequestSource& source, RunOptions options);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_SCENARIO_RUN_H_
