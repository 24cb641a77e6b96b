// Reports of row simulations and capacity plans: the `simulate` summary and the `plan` table as
// text and JSON, and the power time series and per-request results as CSV. Reads result
// structs, drives nothing. Thread-compatible.
#ifndef HEADROOM_REPORT_SIMULATION_REPORT_H_
#define HEADROOM_REPORT_SIMULATION_REPORT_H_

#include <ostream>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "format/json_fields.h"
#include "format/text_style.h"
#include "sim/capacity_planner.h"
#include "sim/row_simulator.h"
#include "sim/scenario.h"

namespace headroom::report {

// A run's summary in every file that keeps one (plan.json's baseline, policies and runs;
// simulate's summary.json), written and read through format::WriteFields and format::ReadFields.
// The file nests the row power the struct keeps flat.
inline constexpr auto kRunClassFields =
    std::tuple{format::Field("requests", &sim::RunSummary::Class::requests),
               format::Field("ttft_p50_s", &sim::RunSummary::Class::ttft_p50_s),
               format::Field("ttft_p99_s", &sim::RunSummary::Class::ttft_p99_s),
               format::Field("tbt_p50_s", &sim::RunSummary::Class::tbt_p50_s),
               format::Field("tbt_p99_s", &sim::RunSummary::Class::tbt_p99_s),
               format::Field("e2e_p50_s", &sim::RunSummary::Class::e2e_p50_s),
               format::Field("e2e_p90_s", &sim::RunSummary::Class::e2e_p90_s),
               format::Field("e2e_p99_s", &sim::RunSummary::Class::e2e_p99_s),
               format::Field("throughput_tok_s", &sim::RunSummary::Class::throughput_tok_s)};
inline constexpr auto kRunSummaryFields = std::tuple{
    format::Field("servers", &sim::RunSummary::servers),
    format::Field("hp_servers", &sim::RunSummary::hp_servers),
    format::Field("policy", &sim::RunSummary::policy),
    format::Field("budget_w", &sim::RunSummary::budget_w),
    format::Field("brake_events", &sim::RunSummary::brake_events),
    format::Field("over_budget_episodes", &sim::RunSummary::over_budget_episodes),
    format::Field("over_budget_s", &sim::RunSummary::over_budget_s),
    format::Group<sim::RunSummary>(
        "row_power", std::tuple{format::Field("peak_frac", &sim::RunSummary::peak_frac),
                                format::Field("mean_frac", &sim::RunSummary::mean_frac),
                                format::Field("max_rise_frac", &sim::RunSummary::max_rise_frac)}),
    format::Field("capped_server_fraction", &sim::RunSummary::capped_server_fraction),
    format::Field("energy_j", &sim::RunSummary::energy_j),
    format::Field("stopped_early", &sim::RunSummary::stopped_early),
    format::Field("hp", &sim::RunSummary::hp, kRunClassFields),
    format::Field("lp", &sim::RunSummary::lp, kRunClassFields)};

// A run of a plan (plan.json's runs): with its week, and on an unseen week whether it is its
// power verdict (sim/power_verdict.h) and that came near the budget; plans written before the
// verdicts have neither field.
inline constexpr auto kPlanRunFields = std::tuple_cat(
    kRunSummaryFields,
    std::tuple{
        format::Field("week", &sim::RunSummary::week),
        format::Field("power_verdict", &sim::RunSummary::power_verdict, {.may_be_absent = true}),
        format::Field("near_budget", &sim::RunSummary::near_budget, {.may_be_absent = true}),
        format::Field("simulated_s", &sim::RunSummary::simulated_s, {.may_be_absent = true})});

// The run through kRunSummaryFields.
nlohmann::ordered_json RunJson(const sim::RunSummary& run);
// RunJson plus the simulation's own detail: time in each state, cap actions, power
// distribution as a fraction of budget, events processed.
// With the uncapped row's run on the same servers and trace, each lowered budget's energy not
// drawn and latency change against it.
nlohmann::ordered_json SimulationJson(const sim::RowResult& result,
                                      const sim::RowResult* uncapped = nullptr);
// With a colour TextStyle: the headline bold, the table's header bold. The lowered budgets'
// table compares with `uncapped` where given.
std::string SimulationText(const sim::RowResult& result,
                           const format::TextStyle& style = format::TextStyle(),
                           const sim::RowResult* uncapped = nullptr);
// Each lowered budget of a run (RowResult::budget_events): how fast and how well the row met it,
// and (with the uncapped row's run) the energy it did not draw and its latency cost per class.
nlohmann::ordered_json BudgetEventsJson(const sim::RowResult& result,
                                        const sim::RowResult* uncapped);
std::string BudgetEventsText(const sim::RowResult& result, const sim::RowResult* uncapped,
                             const format::TextStyle& style);

// "d2 17:00": the day and time of day of a time on the simulator's clock.
std::string DayAndTime(double seconds);

// What `plan` prints: the scenario, the budget and the uncapped baseline, the SLO, the table, and
// how many simulations ran where (`ran_on`: "on 2 threads").
std::string PlanText(const sim::CapacityPlan& plan, const sim::Scenario& scenario,
                     const std::string& engine, const std::string& ran_on,
                     const format::TextStyle& style = format::TextStyle());
// What `plan --calibrate` prints, against the peak it was asked for.
nlohmann::ordered_json CalibrationJson(const sim::Calibration& c, const sim::Scenario& scenario,
                                       double target_peak_frac);
std::string CalibrationText(const sim::Calibration& c, const sim::Scenario& scenario);

// "time_s,row_w,row_frac,state" per metered sample.
void WritePowerCsv(const sim::RowResult& result, std::ostream& out);
// Header and rows of the per-request CSV.
void WriteRequestCsvHeader(std::ostream& out);
void WriteRequestCsvRow(const sim::RequestResult& r, std::ostream& out);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_SIMULATION_REPORT_H_
