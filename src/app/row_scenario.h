// A row scenario as `simulate` and `plan` take it: a built-in name or a YAML file, with the
// flags' overrides (seed, SLO bounds, serving settings, policy constants) and the engine's
// calibration, bound to the catalogs. Errors name the flag the value came from.
#ifndef HEADROOM_APP_ROW_SCENARIO_H_
#define HEADROOM_APP_ROW_SCENARIO_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "app/context.h"
#include "core/result.h"
#include "policy/policy_factory.h"
#include "sim/scenario.h"

namespace headroom::app {

// What the flags' defaults and help name.
using policy::PolicyNames;
using sim::kDefaultScenario;
using sim::ScenarioNames;

struct ScenarioRequest {
  std::string scenario = std::string(kDefaultScenario);  // a name or a YAML file
  std::string catalog_dir = {};                          // empty: the built-in catalog
  std::optional<std::uint64_t> seed = {};                // nullopt: the scenario's
  std::vector<std::string> slo = {};                     // "key=value" SLO bound overrides (--slo)
  std::vector<std::string> serving = {};       // "key=value" serving overrides (--serving)
  std::vector<std::string> set = {};           // "key=value" policy constant overrides (--set)
  std::vector<std::string> energy_saver = {};  // "key=value" (--energy-saver)
  EngineOptions engine = {};
};

[[nodiscard]] core::Result<sim::ResolvedScenario> ResolveScenario(const ScenarioRequest& request);

// A --policies flag's value: comma-separated names, or "all" for every policy; empty: none.
std::vector<std::string> PolicyList(std::string_view text);

}  // namespace headroom::app

#endif  // HEADROOM_APP_ROW_SCENARIO_H_
