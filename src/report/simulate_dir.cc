#include "report/simulate_dir.h"

#include <filesystem>
#include <tuple>

#include <fmt/format.h>

#include "core/csv_reader.h"
#include "format/json_fields.h"
#include "format/table.h"
#include "report/simulation_report.h"

namespace headroom::report {
namespace {

using nlohmann::json;

constexpr const char* kSimulateWriter = "headroom simulate --out";
// Windows of the row power plot: a week in 5-minute windows, an hour in 2-second ones.
constexpr int kPowerWindows = 2000;

using SimIn = SimulateInputs;
constexpr auto kSimulateInputsFields =
    std::tuple{format::Field("scenario", &SimIn::scenario),
               format::Field("description", &SimIn::description),
               format::Field("scenario_source", &SimIn::scenario_source),
               format::Field("trace", &SimIn::trace),
               format::Field("seed", &SimIn::seed),
               format::Field("policy", &SimIn::policy),
               format::Field("servers", &SimIn::servers),
               format::Field("provisioned_servers", &SimIn::provisioned_servers),
               format::Field("version", &SimIn::version),
               format::Field("overrides", &SimIn::overrides),
               format::Field("t1_frac", &SimIn::t1_frac),
               format::Field("t2_frac", &SimIn::t2_frac)};

// What summary.json holds of the report (written by SimulationJson and the simulate command,
// which adds "inputs" through SimulateInputsJson and "uncapped" through RunJson).
constexpr auto kSimulateSummaryFields = std::tuple{
    format::Field("inputs", &SimulateReport::inputs, kSimulateInputsFields),
    format::Inline(&SimulateReport::run, kRunSummaryFields),
    format::Field("duration_s", &SimulateReport::duration_s),
    format::Field("uncapped", &SimulateReport::uncapped, kRunSummaryFields, {.omit_empty = true})};

// power.csv reduced to windows; a brake mark where the state turns to "brake".
core::Status ReadPower(const std::string& path, PowerTrace& trace) {
  std::vector<sim::PowerSample> samples;
  std::vector<double> brakes;
  bool braking = false;
  HEADROOM_RETURN_IF_ERROR(core::ReadCsv(
      path, {"time_s", "row_w", "state"}, [&](const core::CsvRow& row) -> core::Status {
        HEADROOM_ASSIGN_OR_RETURN(double t, row.Number(0));
        HEADROOM_ASSIGN_OR_RETURN(double w, row.Number(1));
        if (!samples.empty() && t <= samples.back().time_s) {
          return core::Fail(core::Error::InvalidArgument(fmt::format(
              "{}:{}: column 'time_s': {} is not after the line before", path, row.line(), t)));
        }
        samples.push_back({.time_s = t, .row_w = w, .state = 0});
        const bool brake = row.Text(2) == "brake";
        if (brake && !braking) brakes.push_back(t);
        braking = brake;
        return core::Ok();
      }));
  if (samples.empty()) {
    return core::Fail(core::Error::InvalidArgument(fmt::format("{}: no samples", path)));
  }
  PowerTrace reduced = ReducePowerSamples(samples, kPowerWindows);
  trace.window_s = reduced.window_s;
  trace.windows = std::move(reduced.windows);
  trace.brake_s = std::move(brakes);
  return core::Ok();
}

// summary.json's budget_events (sim::BudgetEvent), in time order: what the power plot draws.
core::Result<std::vector<PowerTrace::Lowered>> ReadLowered(const json& summary,
                                                           const std::string& path) {
  std::vector<PowerTrace::Lowered> out;
  if (!summary.contains("budget_events")) return out;
  const json& events = summary["budget_events"];
  const auto bad = [&](std::size_t i, std::string_view what) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{}: field 'budget_events[{}]': {}", path, i, what)));
  };
  if (!events.is_array()) return bad(0, "expected a list");
  for (std::size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    PowerTrace::Lowered l;
    for (const auto& [key, out_value] :
         {std::pair{"start_s", &l.start_s}, std::pair{"end_s", &l.end_s},
          std::pair{"budget_w", &l.budget_w}}) {
      if (!e.is_object() || !e.contains(key) || !e[key].is_number()) {
        return bad(i, fmt::format("'{}' must be a number", key));
      }
      *out_value = e[key].get<double>();
    }
    if (!(l.end_s > l.start_s) || !(l.budget_w > 0) ||
        (!out.empty() && l.start_s < out.back().end_s)) {
      return bad(i, "not a lowered budget after the one before");
    }
    out.push_back(l);
  }
  return out;
}

core::Result<RequestLatencies> ReadRequests(const std::string& path) {
  RequestLatencies out;
  HEADROOM_RETURN_IF_ERROR(core::ReadCsv(
      path, {"priority", "ttft_s", "e2e_s"}, [&](const core::CsvRow& row) -> core::Status {
        HEADROOM_ASSIGN_OR_RETURN(double ttft, row.Number(1));
        HEADROOM_ASSIGN_OR_RETURN(double e2e, row.Number(2));
        if (row.Text(0) == "hp") {
          out.hp_ttft_s.push_back(ttft);
          out.hp_e2e_s.push_back(e2e);
        } else if (row.Text(0) == "lp") {
          out.lp_ttft_s.push_back(ttft);
          out.lp_e2e_s.push_back(e2e);
        } else {
          return core::Fail(core::Error::InvalidArgument(
              fmt::format("{}:{}: column 'priority': '{}' is neither hp nor lp", path, row.line(),
                          row.Text(0))));
        }
        return core::Ok();
      }));
  return out;
}

}  // namespace

nlohmann::ordered_json SimulateInputsJson(const SimulateInputs& in) {
  return format::TableJson(in, kSimulateInputsFields);
}

core::Result<SimulateReport> ReadSimulateDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return core::Fail(core::Error::NotFound(fmt::format("{}: no such directory", dir)));
  }
  const std::string path = fmt::format("{}/{}", dir, kSimulateSummaryFile);
  HEADROOM_ASSIGN_OR_RETURN(json j, format::ReadJsonObject(path));
  format::FieldReader r(path, kSimulateWriter);
  SimulateReport report;
  format::ReadFields(r, j, "", report, kSimulateSummaryFields);
  if (r.error()) return core::Fail(*r.error());
  report.power.policy = report.run.policy;
  report.power.servers = report.run.servers;
  report.power.budget_w = report.run.budget_w;
  HEADROOM_RETURN_IF_ERROR(ReadPower(fmt::format("{}/{}", dir, kSimulatePowerFile), report.power));
  HEADROOM_ASSIGN_OR_RETURN(report.power.lowered, ReadLowered(j, path));
  HEADROOM_ASSIGN_OR_RETURN(report.requests,
                            ReadRequests(fmt::format("{}/{}", dir, kRequestsFile)));
  if (report.uncapped) {
    HEADROOM_ASSIGN_OR_RETURN(report.uncapped_requests,
                              ReadRequests(fmt::format("{}/{}", dir, kUncappedRequestsFile)));
  }
  return report;
}

std::string SimulateQuestion(const SimulateReport& r) {
  return fmt::format(
      "How does {} run {} servers (provisioned for {}) in the row's {:.0f} kW power budget: how "
      "close does the row come to the budget, what does capping cost in latency, and does the "
      "brake engage?",
      r.run.policy, r.run.servers, r.inputs.provisioned_servers, r.run.budget_w / 1e3);
}

std::string SimulateAnswer(const SimulateReport& r) {
  const sim::RunSummary& s = r.run;
  std::string latency;
  if (r.uncapped) {
    const sim::Impact i = sim::Compare(s, *r.uncapped);
    latency = fmt::format("HP P50 {}, LP P50 {} vs uncapped",
                          format::FormatChange(i.hp_p50_e2e_pct / 100),
                          format::FormatChange(i.lp_p50_e2e_pct / 100));
  } else {
    latency = fmt::format("HP P50 {}, LP P50 {}", format::FormatSeconds(s.hp.e2e_p50_s),
                          format::FormatSeconds(s.lp.e2e_p50_s));
  }
  return fmt::format("{} on {} servers: peak {:.1f}% of budget, {}, {} brake{}", s.policy,
                     s.servers, s.peak_frac * 100, latency, s.brake_events,
                     s.brake_events == 1 ? "" : "s");
}

}  // namespace headroom::report
