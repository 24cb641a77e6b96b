#include "app/study.h"

#include <cctype>
#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "app/context.h"
#include "core/files.h"
#include "core/parse.h"
#include "core/yaml_reader.h"

namespace headroom::app {
namespace {

// A plan of the study file, before the grid.
struct PlanSpec {
  std::string name;
  PlanRequest request;
};

struct StudyFile {
  std::string name;
  std::string description;
  std::vector<PlanSpec> plans;
  std::vector<std::pair<std::string, std::vector<std::string>>> grid;  // key, its values
};

// A plan's scenario: a built-in name as it is; a file relative to the study file's directory.
std::string ScenarioPath(const std::string& scenario, const std::string& study_file) {
  const std::filesystem::path beside =
      std::filesystem::path(study_file).parent_path() / std::filesystem::path(scenario);
  std::error_code ec;
  return std::filesystem::exists(beside, ec) ? beside.string() : scenario;
}

// A map of `key: value` (plan --slo and the like) as "key=value" strings.
core::Status KeyValues(const core::YamlReader& p, std::string_view key,
                       std::vector<std::string>* out) {
  if (!p.Has(key)) return core::Ok();
  HEADROOM_ASSIGN_OR_RETURN(const core::YamlReader map, p.Map(key));
  for (const std::string& k : map.Keys()) {
    HEADROOM_ASSIGN_OR_RETURN(const std::string v, map.String(k));
    out->push_back(fmt::format("{}={}", k, v));
  }
  return core::Ok();
}

core::Status ReadCounts(const core::YamlReader& p, PlanRequest* r) {
  for (auto [key, value, max] :
       {std::tuple{"weeks", &r->weeks, 100}, std::tuple{"validate", &r->validate, 10'000},
        std::tuple{"risk_beyond", &r->risk_beyond, 100}}) {
    if (!p.Has(key)) continue;
    HEADROOM_ASSIGN_OR_RETURN(*value, p.IntegerIn(key, 0, max));
  }
  if (p.Has("seed")) {
    HEADROOM_ASSIGN_OR_RETURN(const int seed, p.IntegerIn("seed", 0, 1'000'000'000));
    r->scenario.seed = static_cast<std::uint64_t>(seed);
  }
  return core::Ok();
}

core::Result<PlanSpec> ReadPlan(const core::YamlReader& p, const std::string& file) {
  HEADROOM_RETURN_IF_ERROR(p.CheckKnownKeys(
      {"name", "scenario", "slo", "serving", "set", "seed", "trace", "policies", "weeks",
       "validate", "max_weekly_risk", "confidence", "risk_beyond", "stress"}));
  PlanSpec spec;
  HEADROOM_ASSIGN_OR_RETURN(spec.name, p.String("name"));
  PlanRequest& r = spec.request;
  HEADROOM_ASSIGN_OR_RETURN(const std::string scenario, p.String("scenario"));
  r.scenario.scenario = ScenarioPath(scenario, file);
  HEADROOM_RETURN_IF_ERROR(KeyValues(p, "slo", &r.scenario.slo));
  HEADROOM_RETURN_IF_ERROR(KeyValues(p, "serving", &r.scenario.serving));
  HEADROOM_RETURN_IF_ERROR(KeyValues(p, "set", &r.scenario.set));
  HEADROOM_RETURN_IF_ERROR(ReadCounts(p, &r));
  for (auto [key, value] :
       {std::pair{"trace", &r.trace}, std::pair{"max_weekly_risk", &r.max_weekly_risk},
        std::pair{"confidence", &r.confidence}}) {
    HEADROOM_ASSIGN_OR_RETURN(const std::optional<std::string> text, p.OptionalString(key));
    *value = text.value_or("");
  }
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<std::string> policies, p.StringList("policies"));
  r.policies = fmt::format("{}", fmt::join(policies, ","));
  HEADROOM_ASSIGN_OR_RETURN(r.stress, p.StringList("stress"));
  return spec;
}

// What a grid key may set: a plan's SLO, serving or policy constant, its seed or its risk.
bool GridKey(const std::string& key) {
  for (const char* prefix : {"slo.", "serving.", "set."}) {
    if (key.rfind(prefix, 0) == 0 && key.size() > std::string_view(prefix).size()) return true;
  }
  return key == "seed" || key == "max_weekly_risk" || key == "confidence";
}

core::Status ReadGrid(const core::YamlReader& y, StudyFile* study) {
  if (!y.Has("grid")) return core::Ok();
  HEADROOM_ASSIGN_OR_RETURN(const core::YamlReader grid, y.Map("grid"));
  for (const std::string& key : grid.Keys()) {
    if (!GridKey(key)) {
      return core::Fail(grid.ErrorAt(key,
                                     "expected slo.KEY, serving.KEY, set.KEY, seed, "
                                     "max_weekly_risk or confidence"));
    }
    HEADROOM_ASSIGN_OR_RETURN(std::vector<std::string> values, grid.StringList(key));
    if (values.empty()) return core::Fail(grid.ErrorAt(key, "expected a list of values"));
    for (const std::string& v : values) {
      const auto seed = core::ParseInteger(v);
      if (key == "seed" && (!seed || *seed < 0)) {
        return core::Fail(
            grid.ErrorAt(key, fmt::format("'{}': expected a seed, a whole number >= 0", v)));
      }
    }
    study->grid.emplace_back(key, std::move(values));
  }
  return core::Ok();
}

core::Result<StudyFile> ReadStudyFile(const std::string& path) {
  HEADROOM_ASSIGN_OR_RETURN(const std::string text, core::ReadFile(path));
  HEADROOM_ASSIGN_OR_RETURN(const core::YamlReader y, core::YamlReader::Parse(text, path));
  HEADROOM_RETURN_IF_ERROR(y.CheckKnownKeys({"name", "description", "plans", "grid"}));
  StudyFile study;
  HEADROOM_ASSIGN_OR_RETURN(study.name, y.String("name"));
  HEADROOM_ASSIGN_OR_RETURN(auto description, y.OptionalString("description"));
  study.description = description.value_or("");
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<core::YamlReader> plans, y.MapList("plans"));
  if (plans.empty()) return core::Fail(y.ErrorAt("plans", "expected at least one plan"));
  for (const core::YamlReader& p : plans) {
    HEADROOM_ASSIGN_OR_RETURN(PlanSpec spec, ReadPlan(p, path));
    for (const PlanSpec& other : study.plans) {
      if (other.name == spec.name) return core::Fail(p.ErrorAt("name", "given twice"));
    }
    study.plans.push_back(std::move(spec));
  }
  HEADROOM_RETURN_IF_ERROR(ReadGrid(y, &study));
  return study;
}

// A grid setting applied to a plan's request.
void Apply(const std::string& key, const std::string& value, PlanRequest* r) {
  const std::string rest = key.substr(key.find('.') + 1);
  if (key.rfind("slo.", 0) == 0) r->scenario.slo.push_back(rest + "=" + value);
  if (key.rfind("serving.", 0) == 0) r->scenario.serving.push_back(rest + "=" + value);
  if (key.rfind("set.", 0) == 0) r->scenario.set.push_back(rest + "=" + value);
  if (key == "max_weekly_risk") r->max_weekly_risk = value;
  if (key == "confidence") r->confidence = value;
  if (key == "seed") r->scenario.seed = static_cast<std::uint64_t>(*core::ParseInteger(value));
}

// Every plan crossed with every combination of the grid, in order.
std::vector<std::pair<report::StudyPlan, PlanRequest>> Expand(const StudyFile& study) {
  std::vector<std::vector<std::pair<std::string, std::string>>> combos = {{}};
  for (const auto& [key, values] : study.grid) {
    std::vector<std::vector<std::pair<std::string, std::string>>> next;
    for (const auto& c : combos) {
      for (const std::string& v : values) {
        next.push_back(c);
        next.back().emplace_back(key, v);
      }
    }
    combos = std::move(next);
  }
  std::vector<std::pair<report::StudyPlan, PlanRequest>> out;
  for (const PlanSpec& spec : study.plans) {
    for (const auto& settings : combos) {
      report::StudyPlan plan{.name = spec.name, .settings = settings};
      PlanRequest request = spec.request;
      for (const auto& [k, v] : settings) {
        plan.name += fmt::format(" {}={}", k, v);
        Apply(k, v, &request);
      }
      std::string slug;
      for (char c : plan.name) {
        const bool plain = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-';
        slug += plain ? c : '_';
      }
      plan.dir = fmt::format("plans/{:02}-{}", out.size() + 1, slug);
      out.emplace_back(std::move(plan), std::move(request));
    }
  }
  return out;
}

}  // namespace

core::Result<StudyOutcome> RunStudy(const StudyRequest& r) {
  HEADROOM_ASSIGN_OR_RETURN(const StudyFile file, ReadStudyFile(r.file));
  StudyOutcome outcome{.data = {.name = file.name,
                                .description = file.description,
                                .source = r.file,
                                .version = r.version}};
  outcome.out_dir = r.out.empty() && r.report ? kDefaultStudyDir : r.out;
  auto plans = Expand(file);
  for (std::size_t k = 0; k < plans.size(); ++k) {
    auto& [plan, request] = plans[k];
    if (r.on_plan) r.on_plan(static_cast<int>(k), static_cast<int>(plans.size()), plan.name);
    request.threads = r.threads;
    request.executor = r.executor;
    request.version = r.version;
    request.stop = r.stop;
    request.progress = r.progress;
    if (!outcome.out_dir.empty()) request.out = outcome.out_dir + "/" + plan.dir;
    auto planned = Plan(request);
    if (!planned) return core::Fail(planned.error().WithContext("plan '" + plan.name + "'"));
    outcome.data.ran_on = r.executor.kind == "slurm"
                              ? std::string("through Slurm, each plan's rounds as job arrays")
                              : fmt::format("one after another, each {}", planned->ran_on);
    plan.plan = std::move(planned->data);
    outcome.data.plans.push_back(std::move(plan));
  }
  if (outcome.out_dir.empty()) return outcome;
  HEADROOM_RETURN_IF_ERROR(report::WriteStudyDir(outcome.out_dir, outcome.data));
  if (!r.report) return outcome;
  HEADROOM_ASSIGN_OR_RETURN(outcome.report,
                            WriteReport(report::ResultKind::kStudy, outcome.out_dir, r.on_warning));
  return outcome;
}

}  // namespace headroom::app
