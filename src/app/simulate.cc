#include "app/simulate.h"

#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "core/files.h"
#include "policy/policy_factory.h"
#include "report/simulation_report.h"
#include "sim/scenario_run.h"

namespace headroom::app {
namespace {

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

void StartUncapped(const SimulateRequest& r, UncappedRun& u) {
  u.thread = std::thread([&r, &u] {
    sim::RunOptions run;
    run.stop = r.stop;
    run.on_request = [&u](const sim::RequestResult& q) {
      report::WriteRequestCsvRow(q, u.requests);
    };
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

}  // namespace

core::Result<Simulation> SimulateRow(const SimulateRequest& r) {
  const bool writing = !r.out_dir.empty();
  std::ofstream requests;
  if (writing) HEADROOM_RETURN_IF_ERROR(OpenRequestCsv(r.out_dir, report::kRequestsFile, requests));
  UncappedRun uncapped;
  if (r.with_uncapped) {
    HEADROOM_RETURN_IF_ERROR(
        OpenRequestCsv(r.out_dir, report::kUncappedRequestsFile, uncapped.requests));
    StartUncapped(r, uncapped);
  }
  sim::RunOptions run;
  run.stop = r.stop;
  run.progress = r.progress;
  run.keep_power_series = writing;
  if (writing) {
    run.on_request = [&requests](const sim::RequestResult& q) {
      report::WriteRequestCsvRow(q, requests);
    };
  }
  auto result = sim::RunScenario(*r.resolved, r.policy, r.servers, r.trace, run);
  if (r.with_uncapped) uncapped.thread.join();
  if (!result) return core::Fail(result.error());
  nlohmann::ordered_json summary = report::SimulationJson(*result);
  Simulation out{.result = std::move(*result), .summary = std::move(summary)};
  out.summary["inputs"] = report::SimulateInputsJson(r.inputs);
  if (r.with_uncapped) {
    if (!*uncapped.result) return core::Fail(uncapped.result->error());
    out.summary["uncapped"] = report::RunJson(sim::Summarize(**uncapped.result));
    HEADROOM_RETURN_IF_ERROR(
        CloseChecked(uncapped.requests, r.out_dir + "/" + report::kUncappedRequestsFile));
  }
  if (writing) {
    HEADROOM_RETURN_IF_ERROR(CloseChecked(requests, r.out_dir + "/" + report::kRequestsFile));
    HEADROOM_RETURN_IF_ERROR(WriteOut(r.out_dir, out.result, out.summary));
  }
  return out;
}

}  // namespace headroom::app
