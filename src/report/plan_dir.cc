#include "report/plan_dir.h"

#include <filesystem>
#include <initializer_list>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/files.h"
#include "core/parse.h"
#include "report/simulation_report.h"

namespace headroom::report {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Reads each listed key of `j` into its member of `into`.
template <typename T>
void ReadNumbers(format::FieldReader& r, const json& j, const std::string& at, T& into,
                 std::initializer_list<std::pair<const char*, double T::*>> fields) {
  for (const auto& [key, member] : fields) into.*member = r.Number(j, key, at);
}

sim::RunSummary::Class ReadClass(format::FieldReader& r, const json& j, const std::string& at) {
  using C = sim::RunSummary::Class;
  C c;
  c.requests = r.Count(j, "requests", at);
  ReadNumbers<C>(r, j, at, c,
                 {{"ttft_p50_s", &C::ttft_p50_s},
                  {"ttft_p99_s", &C::ttft_p99_s},
                  {"tbt_p50_s", &C::tbt_p50_s},
                  {"tbt_p99_s", &C::tbt_p99_s},
                  {"e2e_p50_s", &C::e2e_p50_s},
                  {"e2e_p90_s", &C::e2e_p90_s},
                  {"e2e_p99_s", &C::e2e_p99_s},
                  {"throughput_tok_s", &C::throughput_tok_s}});
  return c;
}

}  // namespace

sim::RunSummary ReadRunJson(format::FieldReader& r, const json& j, const std::string& at) {
  sim::RunSummary s;
  s.policy = r.Text(j, "policy", at);
  s.servers = r.Count<int>(j, "servers", at);
  s.hp_servers = r.Count<int>(j, "hp_servers", at);
  s.budget_w = r.Number(j, "budget_w", at);
  s.brake_events = r.Count(j, "brake_events", at);
  s.over_budget_episodes = r.Count(j, "over_budget_episodes", at);
  s.over_budget_s = r.Number(j, "over_budget_s", at);
  const json& power = r.Object(j, "row_power", at);
  s.peak_frac = r.Number(power, "peak_frac", at + "row_power.");
  s.mean_frac = r.Number(power, "mean_frac", at + "row_power.");
  s.max_rise_frac = r.Number(power, "max_rise_frac", at + "row_power.");
  s.capped_server_fraction = r.Number(j, "capped_server_fraction", at);
  s.energy_j = r.Number(j, "energy_j", at);
  s.stopped_early = r.Flag(j, "stopped_early", at);
  s.hp = ReadClass(r, r.Object(j, "hp", at), at + "hp.");
  s.lp = ReadClass(r, r.Object(j, "lp", at), at + "lp.");
  return s;
}

namespace {

sim::PolicyPlan ReadPolicyPlan(format::FieldReader& r, const json& j, const std::string& at) {
  sim::PolicyPlan p;
  p.policy = r.Text(j, "policy", at);
  p.max_servers = r.Count<int>(j, "max_servers", at);
  p.extra_pct = r.Number(j, "extra_pct", at);
  p.limit = r.Text(j, "limit", at);
  p.searched_servers = r.Count<int>(j, "searched_servers", at);
  p.validated_weeks = r.Count<int>(j, "validated_weeks", at);
  p.validation_failure = r.Text(j, "validation_failure", at);
  using I = sim::Impact;
  ReadNumbers<I>(r, j, at, p.impact,
                 {{"hp_p50_impact_pct", &I::hp_p50_e2e_pct},
                  {"hp_p99_impact_pct", &I::hp_p99_e2e_pct},
                  {"lp_p50_impact_pct", &I::lp_p50_e2e_pct},
                  {"lp_p99_impact_pct", &I::lp_p99_e2e_pct},
                  {"hp_throughput_change_pct", &I::hp_throughput_pct},
                  {"lp_throughput_change_pct", &I::lp_throughput_pct}});
  if (p.max_servers > 0) p.at_max = ReadRunJson(r, r.Object(j, "run", at), at + "run.");
  return p;
}

PlanInputs ReadPlanInputs(format::FieldReader& r, const json& j) {
  const std::string at = "inputs.";
  PlanInputs in;
  in.scenario = r.Text(j, "scenario", at);
  in.description = r.Text(j, "description", at);
  in.scenario_source = r.Text(j, "scenario_source", at);
  in.trace = r.Text(j, "trace", at);
  // Plans written before the engine was named have none.
  if (j.contains("engine")) in.engine = r.Text(j, "engine", at);
  in.seed = r.Count(j, "seed", at);
  in.version = r.Text(j, "version", at);
  for (const json& o : r.List(j, "overrides", at)) {
    if (o.is_string()) in.overrides.push_back(o.get<std::string>());
  }
  const json& slo = r.Object(j, "slo", at);
  ReadNumbers<sim::Slo>(r, slo, at + "slo.", in.slo,
                        {{"hp_p50_e2e_pct", &sim::Slo::hp_p50_e2e_pct},
                         {"hp_p99_e2e_pct", &sim::Slo::hp_p99_e2e_pct},
                         {"lp_p50_e2e_pct", &sim::Slo::lp_p50_e2e_pct}});
  in.slo.max_brake_events = r.Count(slo, "max_brake_events", at + "slo.");
  in.t1_frac = r.Number(j, "t1_frac", at);
  in.t2_frac = r.Number(j, "t2_frac", at);
  return in;
}

core::Status ReadPowerWindows(const std::string& path, PowerTrace& trace) {
  HEADROOM_ASSIGN_OR_RETURN(std::string text, core::ReadFile(path));
  const auto lines = core::Split(text, '\n');
  if (lines.empty() || core::Trim(lines[0]) != "start_s,mean_w,max_w") {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{}:1: expected the header start_s,mean_w,max_w", path)));
  }
  for (std::size_t i = 1; i < lines.size(); ++i) {
    if (core::Trim(lines[i]).empty()) continue;
    const auto cells = core::Split(lines[i], ',');
    std::vector<double> v;
    for (std::string_view cell : cells) {
      if (auto x = core::ParseDouble(core::Trim(cell))) v.push_back(*x);
    }
    if (cells.size() != 3 || v.size() != 3) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("{}:{}: expected three numbers start_s,mean_w,max_w", path, i + 1)));
    }
    trace.windows.push_back({.start_s = v[0], .mean_w = v[1], .max_w = v[2]});
  }
  return core::Ok();
}

}  // namespace

ordered_json PlanReportJson(const PlanReport& report) {
  ordered_json j = PlanJson(report.plan, report.inputs.scenario);
  const PlanInputs& in = report.inputs;
  j["inputs"] = {{"scenario", in.scenario},
                 {"description", in.description},
                 {"scenario_source", in.scenario_source},
                 {"trace", in.trace},
                 {"engine", in.engine},
                 {"seed", in.seed},
                 {"version", in.version},
                 {"overrides", in.overrides},
                 {"slo",
                  {{"hp_p50_e2e_pct", in.slo.hp_p50_e2e_pct},
                   {"hp_p99_e2e_pct", in.slo.hp_p99_e2e_pct},
                   {"lp_p50_e2e_pct", in.slo.lp_p50_e2e_pct},
                   {"max_brake_events", in.slo.max_brake_events}}},
                 {"t1_frac", in.t1_frac},
                 {"t2_frac", in.t2_frac}};
  ordered_json runs = ordered_json::array();
  for (const sim::RunSummary& run : report.plan.runs) {
    runs.push_back(RunJson(run));
    runs.back()["week"] = run.week;
  }
  j["runs"] = std::move(runs);
  if (report.power) {
    const PowerTrace& p = *report.power;
    j["row_power"] = {{"policy", p.policy},     {"servers", p.servers}, {"budget_w", p.budget_w},
                      {"window_s", p.window_s}, {"brake_s", p.brake_s}, {"file", kRowPowerFile}};
  } else {
    j["row_power"] = nullptr;
  }
  return j;
}

core::Status WritePlanDir(const std::string& dir, const PlanReport& report) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--out {}: cannot create the directory: {}", dir, ec.message())));
  }
  if (report.power) {
    std::string csv = "start_s,mean_w,max_w\n";
    for (const PowerWindow& w : report.power->windows) {
      csv += fmt::format("{:.3f},{:.1f},{:.1f}\n", w.start_s, w.mean_w, w.max_w);
    }
    HEADROOM_RETURN_IF_ERROR(
        core::WriteFileAtomically(fmt::format("{}/{}", dir, kRowPowerFile), csv));
  }
  return core::WriteFileAtomically(fmt::format("{}/{}", dir, kPlanFile),
                                   PlanReportJson(report).dump(2) + "\n");
}

core::Result<PlanReport> ReadPlanDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return core::Fail(core::Error::NotFound(
        fmt::format("{}: no such directory (write one with `headroom plan --out {}`)", dir, dir)));
  }
  const std::string path = fmt::format("{}/{}", dir, kPlanFile);
  if (!std::filesystem::exists(path, ec)) {
    return core::Fail(core::Error::NotFound(
        fmt::format("{}: missing; {} is not a directory that `headroom plan`, `simulate`, "
                    "`characterize` or `measure` --out wrote",
                    path, dir)));
  }
  HEADROOM_ASSIGN_OR_RETURN(std::string text, core::ReadFile(path));
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return core::Fail(core::Error::InvalidArgument(fmt::format("{}: not a JSON object", path)));
  }
  format::FieldReader r(path, "headroom plan --out");
  PlanReport report;
  report.inputs = ReadPlanInputs(r, r.Object(j, "inputs", ""));
  sim::CapacityPlan& plan = report.plan;
  plan.baseline_servers = r.Count<int>(j, "baseline_servers", "");
  plan.baseline = ReadRunJson(r, r.Object(j, "baseline", ""), "baseline.");
  plan.simulations = r.Count<int>(j, "simulations", "");
  plan.planning_weeks = r.Count<int>(j, "planning_weeks", "");
  plan.validation_weeks = r.Count<int>(j, "validation_weeks", "");
  plan.risk_beyond = r.Count<int>(j, "risk_beyond", "");
  for (const json& stress : r.List(j, "stress_cases", "")) {
    if (stress.is_string()) plan.stress_cases.push_back(stress.get<std::string>());
  }
  for (const json& seed : r.List(j, "week_seeds", "")) {
    if (seed.is_number_unsigned()) plan.week_seeds.push_back(seed.get<std::uint64_t>());
  }
  if (!r.error() && (plan.planning_weeks < 1 ||
                     plan.week_seeds.size() != static_cast<std::size_t>(sim::SearchedWeeks(plan) +
                                                                        plan.validation_weeks))) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "{}: week_seeds lists {} for {} planning weeks, {} stress cases and {} unseen weeks", path,
        plan.week_seeds.size(), plan.planning_weeks, plan.stress_cases.size(),
        plan.validation_weeks)));
  }
  const json& policies = r.List(j, "policies", "");
  for (std::size_t i = 0; i < policies.size(); ++i) {
    plan.policies.push_back(ReadPolicyPlan(r, policies[i], fmt::format("policies[{}].", i)));
  }
  const json& runs = r.List(j, "runs", "");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    plan.runs.push_back(ReadRunJson(r, runs[i], fmt::format("runs[{}].", i)));
    plan.runs.back().week = r.Count<int>(runs[i], "week", fmt::format("runs[{}].", i));
  }
  const auto power = j.find("row_power");
  if (power != j.end() && !power->is_null()) {
    PowerTrace trace;
    trace.policy = r.Text(*power, "policy", "row_power.");
    trace.servers = r.Count<int>(*power, "servers", "row_power.");
    trace.budget_w = r.Number(*power, "budget_w", "row_power.");
    trace.window_s = r.Number(*power, "window_s", "row_power.");
    for (const json& t : r.List(*power, "brake_s", "row_power.")) {
      if (t.is_number()) trace.brake_s.push_back(t.get<double>());
    }
    if (!r.error()) {
      HEADROOM_RETURN_IF_ERROR(ReadPowerWindows(fmt::format("{}/{}", dir, kRowPowerFile), trace));
    }
    report.power = std::move(trace);
  }
  if (r.error()) return core::Fail(*r.error());
  return report;
}

}  // namespace headroom::report
