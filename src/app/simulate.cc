#include "app/simulate.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "app/row_scenario.h"
#include "core/files.h"
#include "core/parse.h"
#include "policy/policy_factory.h"
#include "report/simulation_report.h"
#include "sim/scenario_run.h"

namespace headroom::app {
namespace {

// One simulation of a policy, with the uncapped row beside it when asked.
struct RowRun {
  const sim::ResolvedScenario* resolved = nullptr;
  std::string policy = {};
  int servers = 0;
  std::string trace = {};              // as --trace; empty: the scenario's workload
  std::string out_dir = {};            // empty: nothing written
  bool with_uncapped = false;          // the uncapped row beside it
  bool token_energy = false;           // sim::RunOptions::attribute_token_energy
  report::SimulateInputs inputs = {};  // summary.json's "inputs"
  const std::atomic<bool>* stop = nullptr;
  std::function<void(double)> progress = {};  // of the policy's run
};

// Opens DIR/FILE for the per-request CSV and writes its header.
core::Status OpenRequestCsv(const std::string& dir, const char* file, std::ofstream& out) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  out.open(fmt::format("{}/{}", dir, file));
  if (ec || !out) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--out {}: cannot write there{}", dir, ec ? ": " + ec.message() : "")));
  }
  report::WriteRequestCsvHeader(out);
  return core::Ok();
}

core::Status CloseChecked(std::ofstream& out, const std::string& path) {
  out.close();
  if (!out) return core::Fail(core::Error::Unavailable(fmt::format("cannot write {}", path)));
  return core::Ok();
}

// The uncapped row's run on its own thread, its requests to `requests`.
struct UncappedRun {
  std::ofstream requests;
  std::optional<core::Result<sim::RowResult>> result;
  std::thread thread;
};

void StartUncapped(const RowRun& r, UncappedRun& u) {
  u.thread = std::thread([&r, &u] {
    sim::RunOptions run;
    run.stop = r.stop;
    if (u.requests.is_open()) {
      run.on_request = [&u](const sim::RequestResult& q) {
        report::WriteRequestCsvRow(q, u.requests);
      };
    }
    u.result = sim::RunScenario(*r.resolved, std::string(policy::kUncappedPolicy), r.servers,
                                r.trace, run);
  });
}

core::Status WriteOut(const std::string& dir, const sim::RowResult& result,
                      const nlohmann::ordered_json& summary) {
  std::ofstream power(dir + "/" + report::kSimulatePowerFile);
  report::WritePowerCsv(result, power);
  HEADROOM_RETURN_IF_ERROR(CloseChecked(power, dir + "/" + report::kSimulatePowerFile));
  return core::WriteFileAtomically(dir + "/" + report::kSimulateSummaryFile,
                                   summary.dump(2) + "\n");
}

core::Result<SimulateResult> RunRow(const RowRun& r) {
  const bool writing = !r.out_dir.empty();
  std::ofstream requests;
  if (writing) HEADROOM_RETURN_IF_ERROR(OpenRequestCsv(r.out_dir, report::kRequestsFile, requests));
  UncappedRun uncapped;
  if (r.with_uncapped) {
    if (writing) {
      HEADROOM_RETURN_IF_ERROR(
          OpenRequestCsv(r.out_dir, report::kUncappedRequestsFile, uncapped.requests));
    }
    StartUncapped(r, uncapped);
  }
  sim::RunOptions run;
  run.stop = r.stop;
  run.progress = r.progress;
  // Kept whether written or not: the row's swing in the grid's bands is read from it (14 MB a
  // week at the PDU's 1 s).
  run.keep_power_series = true;
  run.attribute_token_energy = r.token_energy;
  if (writing) {
    run.on_request = [&requests](const sim::RequestResult& q) {
      report::WriteRequestCsvRow(q, requests);
    };
  }
  auto result = sim::RunScenario(*r.resolved, r.policy, r.servers, r.trace, run);
  if (r.with_uncapped) uncapped.thread.join();
  if (!result) return core::Fail(result.error());
  if (r.with_uncapped && !*uncapped.result) return core::Fail(uncapped.result->error());
  SimulateResult out;
  out.result = std::move(*result);
  if (r.with_uncapped) out.uncapped = std::move(**uncapped.result);
  out.summary = report::SimulationJson(out.result, out.uncapped ? &*out.uncapped : nullptr);
  out.summary["inputs"] = report::SimulateInputsJson(r.inputs);
  if (out.uncapped) {
    out.summary["uncapped"] = report::RunJson(sim::Summarize(*out.uncapped));
    if (writing) {
      HEADROOM_RETURN_IF_ERROR(
          CloseChecked(uncapped.requests, r.out_dir + "/" + report::kUncappedRequestsFile));
    }
  }
  if (writing) {
    HEADROOM_RETURN_IF_ERROR(CloseChecked(requests, r.out_dir + "/" + report::kRequestsFile));
    HEADROOM_RETURN_IF_ERROR(WriteOut(r.out_dir, out.result, out.summary));
  }
  return out;
}

report::SimulateInputs SimulateInputsOf(const sim::ResolvedScenario& resolved,
                                        const SimulateRequest& r, int servers) {
  const sim::Scenario& s = resolved.scenario;
  return {.scenario = s.name,
          .description = s.description,
          .scenario_source = s.source,
          .trace = r.trace,
          .seed = s.seed,
          .policy = r.policy,
          .servers = servers,
          .provisioned_servers = s.servers,
          .version = r.version,
          .overrides = r.scenario.set,
          .t1_frac = resolved.params.t1,
          .t2_frac = resolved.params.t2};
}

// --as-recorded: the one request log --trace names replayed as it is (scenario key
// workload.replay: as-recorded); refused, naming the flags, where --trace is not one log.
core::Status ReplayAsRecorded(const std::string& trace, sim::Scenario& scenario) {
  if (trace.empty() || trace == "scenario") {
    if (scenario.workload.replay == sim::WorkloadReplay::kAsRecorded) return core::Ok();
    return core::Fail(core::Error::InvalidArgument(
        "--as-recorded replays one request log: name it with --trace FILE"));
  }
  if (trace == "azure" || trace == "synth-week") {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--as-recorded replays one request log as it is, but --trace {} {}", trace,
                    trace == "azure" ? "is two traces scaled by service" : "synthesizes a week")));
  }
  scenario.workload.replay = sim::WorkloadReplay::kAsRecorded;
  scenario.workload.priority = sim::PriorityAssignment::kByTrace;
  return core::Ok();
}

// The servers to simulate: --servers, or the provisioned row grown by --oversubscription.
core::Result<int> ServersOf(const SimulateRequest& r, int provisioned) {
  if (r.oversubscription.empty()) return r.servers > 0 ? r.servers : provisioned;
  auto pct = core::ParsePercent(r.oversubscription);
  if (!pct || *pct < 0 || *pct > 1000) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "--oversubscription '{}': expected a percentage such as 30%", r.oversubscription)));
  }
  return static_cast<int>(std::lround(provisioned * (1 + *pct / 100)));
}

}  // namespace

core::Result<SimulateResult> Simulate(const SimulateRequest& r) {
  HEADROOM_ASSIGN_OR_RETURN(sim::ResolvedScenario resolved, ResolveScenario(r.scenario));
  if (r.as_recorded) HEADROOM_RETURN_IF_ERROR(ReplayAsRecorded(r.trace, resolved.scenario));
  HEADROOM_ASSIGN_OR_RETURN(const int n, ServersOf(r, resolved.scenario.servers));
  resolved.row.macro_steps = !r.per_iteration;
  const std::string out = r.out.empty() && r.report ? kDefaultSimulateDir : r.out;
  HEADROOM_ASSIGN_OR_RETURN(
      SimulateResult result,
      RunRow({.resolved = &resolved,
              .policy = r.policy,
              .servers = n,
              .trace = r.trace,
              .out_dir = out,
              // A lowered budget's cost (energy not drawn, latency) is against the uncapped row.
              .with_uncapped = (r.report || !resolved.row.power.budget_schedule.empty()) &&
                               r.policy != policy::kUncappedPolicy,
              .token_energy = r.token_energy,
              .inputs = SimulateInputsOf(resolved, r, n),
              .stop = r.stop,
              .progress = r.progress}));
  result.out_dir = out;
  if (r.report) {
    HEADROOM_ASSIGN_OR_RETURN(result.report,
                              WriteReport(report::ResultKind::kSimulate, out, r.on_warning));
  }
  return result;
}

}  // namespace headroom::app
