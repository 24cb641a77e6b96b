#include "app/row_scenario.h"

#include <fmt/format.h>

#include "catalog/model_catalog.h"
#include "core/parse.h"

namespace headroom::app {

core::Result<sim::ResolvedScenario> ResolveScenario(const ScenarioRequest& request) {
  HEADROOM_ASSIGN_OR_RETURN(sim::Scenario scenario, sim::LoadScenario(request.scenario));
  if (request.seed) scenario.seed = *request.seed;
  for (const std::string& kv : request.slo) {
    HEADROOM_RETURN_IF_ERROR(sim::SetSlo(scenario.slo, kv));
  }
  for (const std::string& kv : request.serving) {
    HEADROOM_RETURN_IF_ERROR(sim::SetServing(scenario, kv));
  }
  for (const std::string& kv : request.energy_saver) {
    HEADROOM_RETURN_IF_ERROR(sim::SetEnergySaver(scenario, kv));
  }
  for (const std::string& kv : request.set) {
    const auto eq = kv.find('=');
    if (eq == std::string::npos) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("--set {}: expected key=value, e.g. --set t1=0.82", kv)));
    }
    auto v = core::ParseDouble(kv.substr(eq + 1));
    if (!v) return core::Fail(v.error().WithContext("--set " + kv));
    scenario.policy_overrides.emplace_back(kv.substr(0, eq), *v);
  }
  HEADROOM_ASSIGN_OR_RETURN(catalog::HardwareCatalog hardware, LoadCatalog(request.catalog_dir));
  HEADROOM_ASSIGN_OR_RETURN(catalog::ModelCatalog models, catalog::ModelCatalog::Embedded());
  HEADROOM_ASSIGN_OR_RETURN(EngineChoice engines, LoadEngines(request.engine, scenario.engine));
  scenario.engine = engines.engine;
  return sim::Resolve(scenario, {&hardware, &models, &engines.engines});
}

std::vector<std::string> PolicyList(std::string_view text) {
  std::vector<std::string> out;
  for (std::string_view p : core::Split(text, ',')) {
    if (!core::Trim(p).empty()) out.emplace_back(core::Trim(p));
  }
  if (out == std::vector<std::string>{"all"}) return PolicyNames();
  return out;
}

}  // namespace headroom::app
