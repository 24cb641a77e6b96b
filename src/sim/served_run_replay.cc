#include "sim/served_run_replay.h"

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "policy/policy_factory.h"
#include "sim/row_simulator.h"
#include "sim/scenario.h"

namespace headroom::sim {
namespace {

// A run's requests, all at time 0, in the order given.
class RunSource final : public RequestSource {
 public:
  explicit RunSource(const model::Measurement& run) : run_(run) {}
  core::Result<std::optional<TraceRequest>> Next() override {
    if (next_ == run_.requests.size()) return std::optional<TraceRequest>();
    const model::RunRequest& r = run_.requests[next_++];
    return std::optional<TraceRequest>(TraceRequest{.arrival_s = 0,
                                                    .prompt_tokens = r.input,
                                                    .output_tokens = r.output,
                                                    .priority = Priority::kHigh});
  }

 private:
  const model::Measurement& run_;
  std::size_t next_ = 0;
};

}  // namespace

core::Result<ResolvedScenario> OneInstanceScenario(const catalog::ValidationCatalogs& catalogs,
                                                   const catalog::InferenceFits& engine,
                                                   const model::Measurement& run) {
  const auto& servers = catalogs.hardware->servers();
  const auto server = std::find_if(servers.begin(), servers.end(), [&](const model::ServerSpec& s) {
    return s.gpu == run.gpu && s.gpus_per_server >= run.tp;
  });
  if (server == servers.end()) {
    return core::Fail(core::Error::NotFound(
        fmt::format("no catalogued server holds {} {} GPUs", run.tp, run.gpu)));
  }
  Scenario s;
  s.name = run.source;
  s.source = run.source;
  s.server = server->name;
  s.servers = 1;
  s.hp_server_fraction = 1.0;
  s.model = run.model;
  s.engine = engine.engine();
  s.instance.tp = run.tp;
  s.instance.instances_per_server = 1;
  if (!run.server) s.instance.overhead = {.from_engine = false};
  catalog::EngineCatalog only;
  only.Add(engine);
  return Resolve(s, {catalogs.hardware, catalogs.models, &only});
}

std::variant<double, std::string> SimulateServedRun(const catalog::ValidationCatalogs& catalogs,
                                                    const catalog::InferenceFits& engine,
                                                    const model::Measurement& run) {
  auto resolved = OneInstanceScenario(catalogs, engine, run);
  if (!resolved) return resolved.error().message();
  RowConfig& row = resolved->row;
  row.instance.max_batch_sequences =
      std::max(row.instance.max_batch_sequences, static_cast<int>(run.requests.size()));
  auto policy = policy::MakePolicy("none", resolved->params);
  if (!policy) return policy.error().message();
  std::vector<RequestResult> done;
  RunOptions options;
  options.keep_power_series = false;
  options.on_request = [&done](const RequestResult& r) { done.push_back(r); };
  RunSource source(run);
  if (auto result = SimulateRow(row, source, **policy, options); !result) {
    return result.error().message();
  }
  if (done.size() != run.requests.size()) return std::string("not every request was served");
  std::vector<double> ttft;
  for (const RequestResult& r : done) ttft.push_back(r.ttft_s);
  std::sort(ttft.begin(), ttft.end());
  const std::size_t n = ttft.size();
  const double median = n % 2 == 1 ? ttft[n / 2] : (ttft[n / 2 - 1] + ttft[n / 2]) / 2;
  // The longest request ends last; its decode span is what follows its first token.
  const auto longest = std::max_element(done.begin(), done.end(), [](const auto& a, const auto& b) {
    return a.output_tokens < b.output_tokens;
  });
  double last = 0;
  for (const RequestResult& r : done) last = std::max(last, r.e2e_s);
  switch (run.metric) {
    case model::Metric::kRunTtftMs:
      return median * 1e3;
    case model::Metric::kRunDecodeSpanMs:
      return (longest->e2e_s - longest->ttft_s) * 1e3;
    default:
      return last * 1e3;
  }
}

void ScoreServedRunsInSimulator(const catalog::ValidationCatalogs& catalogs,
                                const std::vector<model::Measurement>& rows,
                                const std::string& only_engine, int worst,
                                catalog::ValidationReport* report) {
  std::vector<model::Measurement> runs;
  std::copy_if(rows.begin(), rows.end(), std::back_inserter(runs),
               [](const model::Measurement& m) { return !m.requests.empty(); });
  catalog::ValidationReport simulated =
      catalog::Validate(catalogs, runs, worst,
                        [&catalogs](const catalog::InferenceFits& e, const model::Measurement& m) {
                          return SimulateServedRun(catalogs, e, m);
                        });
  for (catalog::ValidationCell& cell : simulated.cells) {
    if (!only_engine.empty() && cell.engine != only_engine) continue;
    cell.dataset += " (row simulator)";
    report->cells.push_back(std::move(cell));
  }
  for (catalog::SkippedRows& s : simulated.skipped) {
    if (only_engine.empty() || s.engine == only_engine) report->skipped.push_back(std::move(s));
  }
}

}  // namespace headroom::sim
