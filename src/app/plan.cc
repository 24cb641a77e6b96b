#include "app/plan.h"

#include <algorithm>

#include <fmt/format.h>

#include "app/context.h"
#include "app/plan_executor.h"
#include "core/parse.h"
#include "policy/policy_factory.h"
#include "report/plan_dir.h"

namespace headroom::app {
namespace {

report::PlanInputs PlanInputsOf(const sim::ResolvedScenario& resolved, const PlanRequest& r) {
  const sim::Scenario& s = resolved.scenario;
  report::PlanInputs in{.scenario = s.name,
                        .description = s.description,
                        .scenario_source = s.source,
                        .trace = r.trace,
                        .engine = resolved.row.engine.Label(),
                        .seed = s.seed,
                        .version = r.version,
                        .overrides = r.scenario.set,
                        .slo = s.slo,
                        .t1_frac = resolved.params.t1,
                        .t2_frac = resolved.params.t2};
  return in;
}

// --max-weekly-risk and --confidence: percentages within (0, 100) and (50, 100), as fractions.
core::Result<std::optional<double>> RiskFlag(std::string_view flag, const std::string& text,
                                             double min_pct) {
  if (text.empty()) return std::optional<double>();
  auto pct = core::ParsePercent(text);
  if (!pct || !(*pct > min_pct && *pct < 100)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} '{}': expected a percentage between {:g}% and 100% (exclusive), e.g. {}",
                    flag, text, min_pct, min_pct == 0 ? "5%" : "95%")));
  }
  return std::optional<double>(*pct / 100);
}

// --out DIR: plan.json, the chosen policy's row power, and with --report the page.
core::Result<std::optional<std::string>> WritePlanOut(const PlanRequest& r, const std::string& out,
                                                      report::PlanReport& data) {
  // The chosen policy's row power on the planning week where it peaked highest, as the plan ran
  // it.
  if (const sim::PolicyPlan* chosen = sim::ChosenPolicy(data.plan)) {
    data.power = report::PlanRunPowerTrace(chosen->at_max);
  }
  HEADROOM_RETURN_IF_ERROR(report::WritePlanDir(out, data));
  if (!r.report) return std::optional<std::string>();
  HEADROOM_ASSIGN_OR_RETURN(std::string path,
                            WriteReport(report::ResultKind::kPlan, out, r.on_warning));
  return std::optional<std::string>(path);
}

// The scenario's plan.executor as the flags would give it.
ExecutorRequest ExecutorOf(const sim::Scenario& s) {
  const sim::Scenario::Executor& e = s.plan_executor;
  return {.kind = e.kind.empty() ? "local" : e.kind,
          .slurm = {.partition = e.partition,
                    .account = e.account,
                    .time_limit = e.time_limit,
                    .tasks_at_once = e.tasks_at_once,
                    .sbatch_args = e.sbatch_args,
                    .work_dir = e.work_dir,
                    .retries = e.retries},
          .runs_per_task = e.runs_per_task};
}

// The flags' executor, else the scenario's (its errors named as its key's).
core::Result<std::unique_ptr<sim::BatchExecutor>> PlanExecutor(const PlanRequest& r,
                                                               const sim::Scenario& s,
                                                               nlohmann::json request) {
  if (!r.executor.kind.empty()) return MakePlanExecutor(r.executor, std::move(request));
  auto made = MakePlanExecutor(ExecutorOf(s), std::move(request));
  if (!made) return core::Fail(made.error().WithContext(s.source + ": plan.executor"));
  return made;
}

}  // namespace

core::Result<sim::PlanOptions> PlanOptionsOf(const PlanRequest& r) {
  sim::PlanOptions options;
  HEADROOM_ASSIGN_OR_RETURN(options.max_weekly_risk,
                            RiskFlag("--max-weekly-risk", r.max_weekly_risk, 0));
  HEADROOM_ASSIGN_OR_RETURN(options.confidence, RiskFlag("--confidence", r.confidence, 50));
  options.trace = r.trace;
  options.weeks = r.weeks;
  options.validate_weeks = r.validate;
  options.risk_beyond = r.risk_beyond;
  if (!r.out.empty() || r.report) options.power_windows = report::kPlanPowerWindows;
  if (!r.stress.empty()) {
    options.stress.emplace();
    for (const std::string& spec : r.stress) {
      if (spec == "none") continue;
      HEADROOM_ASSIGN_OR_RETURN(sim::StressCase c, sim::ParseStressCase(spec));
      options.stress->push_back(std::move(c));
    }
  }
  options.threads = ThreadsOrCores(r.threads);
  options.policies = PolicyList(r.policies);
  options.stop = r.stop;
  options.progress = r.progress;
  return options;
}

// --shed, else the scenario's plan.demand_response; nullopt for none. Read before the plan
// runs, so that a bad one costs no simulation.
core::Result<std::optional<sim::DemandResponse>> DemandResponseOf(const PlanRequest& r,
                                                                  const sim::Scenario& s) {
  if (r.shed.empty()) return s.plan_demand_response;
  HEADROOM_ASSIGN_OR_RETURN(sim::DemandResponse asked, sim::ParseShed(r.shed));
  return asked;
}

core::Result<std::optional<sim::ShedPlan>> PlanShedOf(
    const std::optional<sim::DemandResponse>& asked, const sim::ResolvedScenario& resolved,
    const sim::PlanOptions& options, const sim::CapacityPlan& plan) {
  if (!asked) return std::nullopt;
  HEADROOM_ASSIGN_OR_RETURN(sim::ShedPlan shed, sim::PlanShed(resolved, plan,
                                                              {.asked = *asked,
                                                               .trace = options.trace,
                                                               .threads = options.threads,
                                                               .stop = options.stop,
                                                               .progress = options.progress}));
  return shed;
}

core::Result<PlanOutcome> Plan(const PlanRequest& r) {
  HEADROOM_ASSIGN_OR_RETURN(const sim::ResolvedScenario resolved, ResolveScenario(r.scenario));
  HEADROOM_ASSIGN_OR_RETURN(sim::PlanOptions options, PlanOptionsOf(r));
  HEADROOM_ASSIGN_OR_RETURN(const std::optional<sim::DemandResponse> asked,
                            DemandResponseOf(r, resolved.scenario));
  HEADROOM_ASSIGN_OR_RETURN(
      std::unique_ptr<sim::BatchExecutor> executor,
      PlanExecutor(r, resolved.scenario, PlanTaskRequestJson(r, options.power_windows)));
  options.executor = executor.get();
  HEADROOM_ASSIGN_OR_RETURN(sim::CapacityPlan plan, sim::PlanCapacity(resolved, options));
  PlanOutcome outcome{
      .data = {.plan = std::move(plan), .inputs = PlanInputsOf(resolved, r)},
      .scenario = resolved.scenario,
      .threads = options.threads,
      .ran_on = executor ? executor->Describe() : fmt::format("on {} threads", options.threads)};
  HEADROOM_ASSIGN_OR_RETURN(outcome.data.shed,
                            PlanShedOf(asked, resolved, options, outcome.data.plan));
  outcome.out_dir = r.out.empty() && r.report ? kDefaultPlanDir : r.out;
  if (!outcome.out_dir.empty()) {
    HEADROOM_ASSIGN_OR_RETURN(outcome.report, WritePlanOut(r, outcome.out_dir, outcome.data));
  }
  return outcome;
}

core::Result<LoadCalibration> CalibrateLoad(const PlanRequest& r) {
  HEADROOM_ASSIGN_OR_RETURN(const sim::ResolvedScenario resolved, ResolveScenario(r.scenario));
  HEADROOM_ASSIGN_OR_RETURN(const sim::PlanOptions options, PlanOptionsOf(r));
  const sim::Scenario& s = resolved.scenario;
  const double target =
      s.workload.target_baseline_peak > 0 ? s.workload.target_baseline_peak : 0.79;
  HEADROOM_ASSIGN_OR_RETURN(sim::Calibration c,
                            sim::CalibrateLoad(resolved, target, 0.002, options));
  return LoadCalibration{.calibration = c, .scenario = s, .target = target};
}

}  // namespace headroom::app
