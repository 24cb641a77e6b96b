#include "report/plan_dir.h"

#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "core/csv_reader.h"
#include "core/files.h"
#include "report/shed_report.h"
#include "report/simulation_report.h"

namespace headroom::report {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;
using sim::CapacityPlan;
using sim::PolicyPlan;

constexpr auto kImpactFields =
    std::tuple{format::Field("hp_p50_impact_pct", &sim::Impact::hp_p50_e2e_pct),
               format::Field("hp_p99_impact_pct", &sim::Impact::hp_p99_e2e_pct),
               format::Field("lp_p50_impact_pct", &sim::Impact::lp_p50_e2e_pct),
               format::Field("lp_p99_impact_pct", &sim::Impact::lp_p99_e2e_pct),
               format::Field("hp_throughput_change_pct", &sim::Impact::hp_throughput_pct),
               format::Field("lp_throughput_change_pct", &sim::Impact::lp_throughput_pct)};

bool HasRun(const PolicyPlan& p) { return p.max_servers > 0; }
bool HasNoRun(const PolicyPlan& p) { return p.max_servers <= 0; }

// The run at the answer's, and a few of its numbers repeated beside the policy for the file's
// readers; null when not even the provisioned row keeps the SLO.
constexpr auto kPolicyPlanFields = std::tuple{
    format::Field("policy", &PolicyPlan::policy),
    format::Field("max_servers", &PolicyPlan::max_servers),
    format::Field("extra_pct", &PolicyPlan::extra_pct),
    format::Computed<PolicyPlan>("brake_events",
                                 [](const PolicyPlan& p) { return p.at_max.brake_events; }),
    format::Inline(&PolicyPlan::impact, kImpactFields),
    format::Computed<PolicyPlan>("peak_frac",
                                 [](const PolicyPlan& p) { return p.at_max.peak_frac; }),
    format::Computed<PolicyPlan>(
        "capped_server_fraction",
        [](const PolicyPlan& p) { return p.at_max.capped_server_fraction; }),
    format::Field("limit", &PolicyPlan::limit),
    format::Field("searched_servers", &PolicyPlan::searched_servers),
    format::Field("validated_weeks", &PolicyPlan::validated_weeks),
    format::Field("validation_failure", &PolicyPlan::validation_failure),
    format::When(&HasRun, std::tuple{format::Field("run", &PolicyPlan::at_max, kRunSummaryFields)}),
    format::When(&HasNoRun, std::tuple{format::Computed<PolicyPlan>(
                                "run", [](const PolicyPlan&) { return nullptr; })})};

// Written only: sim::PlanRisk derives it from the runs.
constexpr auto kCountRiskFields = std::tuple{
    format::Field("policy", &sim::CountRisk::policy),
    format::Field("servers", &sim::CountRisk::servers),
    format::Field("weeks", &sim::CountRisk::weeks),
    format::Field("weeks_with_power_event", &sim::CountRisk::weeks_with_power_event),
    format::Field("worst_peak_frac", &sim::CountRisk::worst_peak_frac),
    format::Field("smallest_margin_w", &sim::CountRisk::smallest_margin_w),
    format::Field("most_capped_fraction", &sim::CountRisk::most_capped_fraction),
    format::Field("unseen_weeks", &sim::CountRisk::unseen_weeks),
    format::Field("unseen_weeks_with_power_event", &sim::CountRisk::unseen_weeks_with_power_event),
    format::Field("unseen_weeks_near_budget", &sim::CountRisk::unseen_weeks_near_budget),
    format::Field("unseen_risk_upper", &sim::CountRisk::unseen_risk_upper),
    format::Field("unseen_risk_lower", &sim::CountRisk::unseen_risk_lower)};

// Not in the file: replayed_simulations (it varies with the threads' timing) and shared_runs.
constexpr auto kCapacityPlanFields = std::tuple{
    format::Field("baseline_servers", &CapacityPlan::baseline_servers),
    format::Field("baseline", &CapacityPlan::baseline, kRunSummaryFields),
    format::Field("simulations", &CapacityPlan::simulations),
    format::Field("planning_weeks", &CapacityPlan::planning_weeks),
    format::Field("validation_weeks", &CapacityPlan::validation_weeks),
    // Plans written before the weekly risk was bounded have neither.
    format::Field("max_weekly_risk", &CapacityPlan::max_weekly_risk, {.may_be_absent = true}),
    format::Field("confidence", &CapacityPlan::confidence, {.may_be_absent = true}),
    format::Field("stress_cases", &CapacityPlan::stress_cases),
    format::Field("week_seeds", &CapacityPlan::week_seeds),
    format::Field("policies", &CapacityPlan::policies, kPolicyPlanFields),
    format::Field("risk_beyond", &CapacityPlan::risk_beyond),
    format::Computed<CapacityPlan>("risk", [](const CapacityPlan& plan) {
      return format::TableJson(sim::PlanRisk(plan), kCountRiskFields);
    })};

constexpr auto kSloFields =
    std::tuple{format::Field("hp_p50_e2e_pct", &sim::Slo::hp_p50_e2e_pct),
               format::Field("hp_p99_e2e_pct", &sim::Slo::hp_p99_e2e_pct),
               format::Field("lp_p50_e2e_pct", &sim::Slo::lp_p50_e2e_pct),
               format::Field("max_brake_events", &sim::Slo::max_brake_events)};

constexpr auto kPlanInputsFields = std::tuple{
    format::Field("scenario", &PlanInputs::scenario),
    format::Field("description", &PlanInputs::description),
    format::Field("scenario_source", &PlanInputs::scenario_source),
    format::Field("trace", &PlanInputs::trace),
    // Plans written before the engine was named have none.
    format::Field("engine", &PlanInputs::engine, {.may_be_absent = true}),
    format::Field("seed", &PlanInputs::seed), format::Field("version", &PlanInputs::version),
    format::Field("overrides", &PlanInputs::overrides),
    format::Field("slo", &PlanInputs::slo, kSloFields),
    format::Field("t1_frac", &PlanInputs::t1_frac), format::Field("t2_frac", &PlanInputs::t2_frac)};

// The windows themselves are in kRowPowerFile.
constexpr auto kPowerTraceFields = std::tuple{
    format::Field("policy", &PowerTrace::policy),
    format::Field("servers", &PowerTrace::servers),
    format::Field("budget_w", &PowerTrace::budget_w),
    format::Field("window_s", &PowerTrace::window_s),
    format::Field("brake_s", &PowerTrace::brake_s),
    format::Computed<PowerTrace>("file", [](const PowerTrace&) { return kRowPowerFile; })};

// plan.json: the scenario's name first, the plan, its inputs, every run, the power trace.
constexpr auto kPlanFileFields = std::tuple{
    format::Computed<PlanReport>("scenario", [](const PlanReport& r) { return r.inputs.scenario; }),
    format::Inline(&PlanReport::plan, kCapacityPlanFields),
    format::Field("inputs", &PlanReport::inputs, kPlanInputsFields),
    format::Inline(&PlanReport::plan,
                   std::tuple{format::Field("runs", &CapacityPlan::runs, kPlanRunFields)}),
    // Plans written before the power trace was kept have none.
    format::Field("row_power", &PlanReport::power, kPowerTraceFields, {.may_be_absent = true}),
    // Only where demand response was asked (plan --shed, plan.demand_response).
    format::Field("demand_response", &PlanReport::shed, kShedPlanFields, {.omit_empty = true})};

core::Status ReadPowerWindows(const std::string& path, PowerTrace& trace) {
  return core::ReadCsv(path, {"start_s", "mean_w", "max_w"},
                       [&](const core::CsvRow& row) -> core::Status {
                         PowerWindow w;
                         HEADROOM_ASSIGN_OR_RETURN(w.start_s, row.Number(0));
                         HEADROOM_ASSIGN_OR_RETURN(w.mean_w, row.Number(1));
                         HEADROOM_ASSIGN_OR_RETURN(w.max_w, row.Number(2));
                         trace.windows.push_back(w);
                         return core::Ok();
                       });
}

}  // namespace

ordered_json PlanReportJson(const PlanReport& report) {
  ordered_json j = ordered_json::object();
  format::WriteFields(j, report, kPlanFileFields);
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
  format::ReadFields(r, j, "", report, kPlanFileFields);
  if (r.error()) return core::Fail(*r.error());
  const CapacityPlan& plan = report.plan;
  if (plan.planning_weeks < 1 ||
      plan.week_seeds.size() !=
          static_cast<std::size_t>(sim::SearchedWeeks(plan) + plan.validation_weeks)) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "{}: week_seeds lists {} for {} planning weeks, {} stress cases and {} unseen weeks", path,
        plan.week_seeds.size(), plan.planning_weeks, plan.stress_cases.size(),
        plan.validation_weeks)));
  }
  if (report.power) {
    HEADROOM_RETURN_IF_ERROR(
        ReadPowerWindows(fmt::format("{}/{}", dir, kRowPowerFile), *report.power));
  }
  return report;
}

}  // namespace headroom::report
