#include "sim/token_energy_validation.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <utility>

#include "catalog/serving_energy_validation.h"
#include "policy/policy_factory.h"
#include "sim/random_draws.h"
#include "sim/row_simulator.h"
#include "sim/served_run_replay.h"

namespace headroom::sim {
namespace {

// ML.ENERGY's runs: vLLM 0.5.4 with --max-model-len 4096 and chunked prefill off, where vLLM
// sets max_num_batched_tokens to the context (data/validation/README.md).
constexpr int kRunContextTokens = 4096;

std::vector<TraceRequest> RunRequests(const model::Measurement& run, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int prompt = std::clamp(run.input, 1, kRunContextTokens - 1);
  const int longest = kRunContextTokens - prompt;
  std::vector<TraceRequest> out(static_cast<std::size_t>(kAttributedRequestsPerSequence) *
                                static_cast<std::size_t>(run.batch));
  for (TraceRequest& r : out) {
    const double drawn = std::ceil(ExponentialDraw(rng, 1.0 / std::max(1, run.output)));
    r = {
        .arrival_s = 0,
        .prompt_tokens = prompt,
        .output_tokens = std::clamp(static_cast<int>(std::min<double>(drawn, longest)), 1, longest),
        .priority = Priority::kHigh};
  }
  return out;
}

struct Served {
  RowResult result;
  double last_admitted_s = 0;  // the last request's first token: the queue is empty from there
};

core::Result<Served> Serve(const RowConfig& row, const policy::PolicyParams& params,
                           const std::vector<TraceRequest>& requests,
                           std::optional<SimTime> windows_until) {
  HEADROOM_ASSIGN_OR_RETURN(auto policy, policy::MakePolicy("none", params));
  Served served;
  RunOptions options;
  options.keep_power_series = false;
  options.attribute_token_energy = true;
  options.token_energy_until = windows_until;
  options.on_request = [&served](const RequestResult& r) {
    served.last_admitted_s = std::max(served.last_admitted_s, r.arrival_s + r.ttft_s);
  };
  VectorSource source(requests);
  HEADROOM_ASSIGN_OR_RETURN(served.result, SimulateRow(row, source, *policy, options));
  return served;
}

}  // namespace

std::variant<AttributedRun, std::string> AttributeServingRun(
    const catalog::ValidationCatalogs& catalogs, const catalog::InferenceFits& engine,
    const model::Measurement& run, std::uint64_t seed) {
  auto resolved = OneInstanceScenario(catalogs, engine, run);
  if (!resolved) return resolved.error().message();
  RowConfig& row = resolved->row;
  row.instance.max_batch_sequences = run.batch;
  row.instance.max_num_batched_tokens = 0;
  row.instance.max_prefill_tokens = kRunContextTokens;
  row.instance.prefix_cache = {};
  const std::vector<TraceRequest> requests = RunRequests(run, seed);
  // Once to find where the steady state ends, then again reading the windows up to there only:
  // the drain after it runs a shrinking batch, which ML.ENERGY's steady state leaves out.
  auto whole = Serve(row, resolved->params, requests, std::nullopt);
  if (!whole) return whole.error().message();
  auto steady = Serve(row, resolved->params, requests, core::FromSeconds(whole->last_admitted_s));
  if (!steady) return steady.error().message();
  const ServerTokenEnergy& server = steady->result.token_energy.front();
  if (!server.fit) return "no attribution: " + server.why;
  AttributedRun out{.fit = *server.fit,
                    .requests = static_cast<int>(requests.size()),
                    .run_s = whole->result.simulated_s};
  const telemetry::EnergyWindowSample& over = out.fit.over;
  if (!(over.generated_tokens > 0)) return std::string("no output token in the steady state");
  const int gpus = resolved->row.server.gpus_per_server;
  const double gpu_idle_w = server.idle_w / gpus;
  // The fit's costs are above the whole server's idle; the run's own GPUs are its tp of them.
  const double attributed_j = out.fit.j_per_prompt_token * over.prompt_tokens +
                              out.fit.j_per_generated_token * over.generated_tokens +
                              gpu_idle_w * run.tp * over.seconds;
  const double exact_j = over.energy_j - gpu_idle_w * (gpus - run.tp) * over.seconds;
  out.joules_per_output_token = attributed_j / over.generated_tokens;
  out.exact_joules_per_output_token = exact_j / over.generated_tokens;
  return out;
}

core::Status ScoreAttributedTokenEnergy(const catalog::ValidationCatalogs& catalogs,
                                        const std::vector<model::Measurement>& rows,
                                        const std::string& engine, const std::string& only_engine,
                                        int worst, catalog::ValidationReport* report) {
  if (!only_engine.empty() && only_engine != engine) return core::Ok();
  const std::vector<std::string>& fitted_models = catalog::kServingEnergyCalibrationModels;
  HEADROOM_ASSIGN_OR_RETURN(const catalog::ServingEnergyCalibration calibration,
                            catalog::CalibrateServingEnergy(catalogs, engine, rows, fitted_models));
  std::vector<model::Measurement> energy;
  for (model::Measurement m : rows) {
    if (m.metric != model::Metric::kJoulesPerToken) continue;
    m.input = calibration.prompt;
    energy.push_back(std::move(m));
  }
  catalog::ValidationReport scored;
  catalog::ScoreRows(catalogs, calibration.served, energy, catalog::OfModels(fitted_models), worst,
                     &scored,
                     [&catalogs](const catalog::InferenceFits& e,
                                 const model::Measurement& m) -> std::variant<double, std::string> {
                       auto run = AttributeServingRun(catalogs, e, m);
                       if (const auto* why = std::get_if<std::string>(&run)) return *why;
                       return std::get<AttributedRun>(run).joules_per_output_token;
                     });
  for (catalog::ValidationCell& cell : scored.cells) {
    cell.dataset += " (agent's attribution)";
    report->cells.push_back(std::move(cell));
  }
  for (catalog::SkippedRows& s : scored.skipped) report->skipped.push_back(std::move(s));
  return core::Ok();
}

}  // namespace headroom::sim
