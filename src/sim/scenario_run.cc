#include "sim/scenario_run.h"

#include <memory>
#include <utility>

#include "policy/policy_factory.h"
#include "sim/workload.h"

namespace headroom::sim {

core::Result<RowResult> RunScenario(const ResolvedScenario& scenario, const std::string& policy,
                                    int servers, const std::string& trace, RunOptions options) {
  HEADROOM_ASSIGN_OR_RETURN(
      std::unique_ptr<RequestSource> source,
      MakeWorkload(scenario.scenario, trace, servers,
                   HpServers(servers, scenario.row.hp_server_fraction), scenario.scenario.seed));
  if (options.expected_duration_s <= 0) {
    options.expected_duration_s = ExpectedDuration(scenario.scenario, trace);
  }
  return RunScenarioOn(scenario, policy, servers, *source, std::move(options));
}

core::Status AddShadows(const ResolvedScenario& scenario, const std::vector<std::string>& names,
                        std::vector<std::unique_ptr<policy::RowPolicy>>* owned,
                        RunOptions* options) {
  for (const std::string& name : names) {
    HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<policy::RowPolicy> made,
                              policy::MakePolicy(name, scenario.params));
    owned->push_back(std::move(made));
    options->shadows.push_back(owned->back().get());
  }
  return core::Ok();
}

core::Result<RowResult> RunScenarioOn(const ResolvedScenario& scenario, const std::string& policy,
                                      int servers, RequestSource& source, RunOptions options) {
  RowConfig row = scenario.row;
  row.servers = servers;
  row.control.brake_release = scenario.params.brake_release;
  HEADROOM_ASSIGN_OR_RETURN(std::unique_ptr<policy::RowPolicy> p,
                            policy::MakePolicy(policy, scenario.params));
  return SimulateRow(row, source, *p, options);
}

}  // namespace headroom::sim
