// Reports of row simulations and capacity plans: the `simulate` summary and the `plan` table as
// text and JSON, and the power time series and per-request results as CSV. Reads result
// structs, drives nothing. Thread-compatible.
#ifndef HEADROOM_REPORT_SIMULATION_REPORT_H_
#define HEADROOM_REPORT_SIMULATION_REPORT_H_

#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "format/text_style.h"
#include "sim/capacity_planner.h"
#include "sim/row_simulator.h"
#include "sim/scenario.h"

namespace headroom::report {

// Keys: servers, hp_servers, policy, budget_w, brake_events, over_budget_episodes,
// row_power.{peak_frac, mean_frac}, capped_server_fraction, energy_j, and per class hp / lp:
// requests, ttft_p50_s, ttft_p99_s, tbt_p50_s, tbt_p99_s, e2e_p50_s, e2e_p90_s, e2e_p99_s,
// throughput_tok_s.
nlohmann::ordered_json RunJson(const sim::RunSummary& run);
// RunJson plus the simulation's own detail: time in each state, cap actions, power
// distribution as a fraction of budget, events processed.
nlohmann::ordered_json SimulationJson(const sim::RowResult& result);
// With a colour TextStyle: the headline bold, the table's header bold.
std::string SimulationText(const sim::RowResult& result,
                           const format::TextStyle& style = format::TextStyle());

// Keys: scenario, baseline_servers, baseline (RunJson), simulations, and policies: a list of
// {policy, max_servers, extra_pct, brake_events, hp_p50_impact_pct, hp_p99_impact_pct,
// lp_p50_impact_pct, lp_throughput_change_pct, peak_frac, capped_server_fraction, limit, run}.
nlohmann::ordered_json PlanJson(const sim::CapacityPlan& plan, const std::string& scenario);

// What `plan` prints: the scenario, the budget and the uncapped baseline, the SLO, the table, and
// how many simulations ran on how many threads.
std::string PlanText(const sim::CapacityPlan& plan, const sim::Scenario& scenario,
                     const std::string& engine, int threads,
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
