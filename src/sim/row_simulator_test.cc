#include "sim/row_simulator.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <gtest/gtest.h>

#include "catalog/testing/embedded_catalogs.h"
#include "policy/policy_factory.h"
#include "sim/capacity_planner.h"
#include "sim/scenario.h"
#include "sim/scenario_run.h"
#include "sim/workload.h"

namespace headroom::sim {
namespace {

// The shipped default scenario bound to the shipped catalog.
ResolvedScenario Default() {
  auto resolved = LoadAndResolveBuiltIn(kDefaultScenario);
  EXPECT_TRUE(resolved) << resolved.error().message();
  return *resolved;
}

// The default scenario's row cut to one HP server.
RowConfig OneHpServer() {
  RowConfig row = Default().row;
  row.servers = 1;
  row.hp_server_fraction = 1;
  return row;
}

RowResult RunRequests(const RowConfig& row, std::vector<TraceRequest> requests,
                      const std::string& policy_name = "none",
                      const policy::PolicyParams& params = {}) {
  VectorSource source(std::move(requests));
  auto policy = policy::MakePolicy(policy_name, params);
  EXPECT_TRUE(policy);
  auto result = SimulateRow(row, source, **policy);
  EXPECT_TRUE(result) << result.error().message();
  return *result;
}

TEST(RowSimulatorTest, OneRequestTakesAPrefillThenDecodeStepsOverAGrowingCache) {
  RowConfig row = OneHpServer();
  const int prompt = 1000, output = 50;
  const RowResult r = RunRequests(row, {{0.0, prompt, output, Priority::kHigh}});
  const model::InferenceModel& m = *row.model;
  const core::Megahertz f = m.gpu().spec().sm_clock_max;
  const double prefill =
      m.gpu().Time(m.PrefillPhaseForBatch(8, 1, prompt, double(prompt) * prompt), f).time_s;
  double decode = 0;
  for (int k = 1; k < output; ++k) {
    decode += m.gpu().Time(m.DecodePhaseForBatch(8, 1, prompt + k), f).time_s;
  }
  EXPECT_NEAR(r.hp.ttft.Quantile(0.5), prefill, prefill * 0.001);
  // Macro steps time a run of decode steps from its two ends: exact for an affine step time.
  EXPECT_NEAR(r.hp.e2e.Quantile(0.5), prefill + decode, (prefill + decode) * 0.001);
  EXPECT_NEAR(r.hp.tbt.Quantile(0.5), decode / (output - 1), decode / (output - 1) * 0.001);
  EXPECT_EQ(r.iterations, static_cast<std::uint64_t>(output));
  EXPECT_EQ(r.hp.requests, 1u);
}

TEST(RowSimulatorTest, BatchLimitQueuesAndKvLimitRejects) {
  RowConfig row = OneHpServer();
  row.instance.max_batch_sequences = 1;
  const double kv = KvCapacityTokens(row);
  ASSERT_GT(kv, 10000);
  const RowResult r = RunRequests(row, {{0.0, 500, 100, Priority::kHigh},
                                        {0.001, 500, 100, Priority::kHigh},
                                        {0.002, static_cast<int>(kv), 10, Priority::kHigh}});
  EXPECT_EQ(r.hp.requests, 2u);
  EXPECT_EQ(r.hp.rejected, 1u);
  // The second waited for the first to finish: its TTFT exceeds the first's whole latency.
  EXPECT_GT(r.hp.ttft.max(), r.hp.e2e.Quantile(0.0) * 0.99);
}

// The default row's server with GPU memory for only `tokens` of KV cache.
RowConfig OneHpServerWithKvCache(double tokens) {
  RowConfig row = OneHpServer();
  const model::InferenceModel& m = *row.model;
  const int tp = row.instance.tp;
  row.instance.memory_fraction =
      (m.WeightBytesPerGpu(tp) + (tokens + 0.5) * m.KvBytesPerGpu(tp, 1)) /
      static_cast<double>(m.gpu().spec().memory_bytes);
  return row;
}

// vLLM allocates KV cache as sequences grow and, when it runs out, preempts the sequence
// admitted last and recomputes it later: two requests that would not fit side by side with
// their whole outputs reserved start together, and the second gives way once.
TEST(RowSimulatorTest, KvCacheGrowsOnDemandAndPreemptsTheLastAdmitted) {
  for (const int budget : {0, 512}) {  // whole prompts, and chunked prefill
    std::map<bool, std::pair<RowResult, std::map<double, RequestResult>>> runs;
    for (const bool macro : {true, false}) {
      RowConfig row = OneHpServerWithKvCache(4000);
      ASSERT_EQ(KvCapacityTokens(row), 4000);
      row.instance.max_num_batched_tokens = budget;
      row.macro_steps = macro;
      auto& [result, by_arrival] = runs[macro];
      VectorSource source({{0.0, 1000, 2000, Priority::kHigh}, {0.5, 1000, 2000, Priority::kHigh}});
      auto policy = policy::MakePolicy("none", {});
      RunOptions options;
      options.on_request = [&](const RequestResult& r) { by_arrival[r.arrival_s] = r; };
      auto r = SimulateRow(row, source, **policy, options);
      ASSERT_TRUE(r) << r.error().message();
      result = std::move(*r);
      ASSERT_EQ(result.hp.requests, 2u);
      EXPECT_EQ(result.hp.output_tokens, 4000);
      // Both ran from the start: the second's first token came long before the first finished.
      const RequestResult& first = by_arrival.at(0.0);
      const RequestResult& second = by_arrival.at(0.5);
      EXPECT_LT(0.5 + second.ttft_s, first.e2e_s / 2) << budget << " " << macro;
      // Each step adds one token per sequence: 2 x (1000 + ~500) fills 4000 before either is
      // done; the second is recomputed once the first has finished, so it ends last.
      EXPECT_EQ(result.hp.preemptions, 1u) << budget << " " << macro;
      EXPECT_GT(0.5 + second.e2e_s, first.e2e_s + 0.1) << budget << " " << macro;
    }
    // A run of decode steps ends where the cache fills, as stepping one iteration at a time does.
    EXPECT_EQ(runs[true].first.iterations, runs[false].first.iterations) << budget;
    for (const double arrival : {0.0, 0.5}) {
      const double e2e = runs[false].second.at(arrival).e2e_s;
      EXPECT_NEAR(runs[true].second.at(arrival).e2e_s, e2e, e2e * 1e-6) << budget;
    }
  }
}

// An uncapped server's GPUs hold their default power limit (TDP) as their firmware does: under
// today's vLLM server's calibration a full batch of Llama-2-70B decode steps on A100s would draw
// more than 400 W a GPU at the highest clock, and runs at a lower one instead.
TEST(RowSimulatorTest, AnUncappedServerHoldsItsGpusDefaultPowerLimit) {
  auto scenario = LoadScenario(kDefaultScenario);
  ASSERT_TRUE(scenario) << scenario.error().message();
  scenario->engine = "vllm-server";
  scenario->instance.max_num_batched_tokens = 0;
  const catalog::testing::ValidationSuite& suite = catalog::testing::EmbeddedValidationSuite();
  auto resolved = Resolve(*scenario, {&suite.hardware, &suite.models, &suite.engines});
  ASSERT_TRUE(resolved) << resolved.error().message();
  RowConfig row = resolved->row;
  row.servers = 1;
  row.hp_server_fraction = 1;
  const model::InferenceModel& m = *row.model;
  const int tp = row.instance.tp;
  const double tdp = m.gpu().spec().power_limit_default.value();
  const model::Phase full_batch =
      *m.DecodePhase({.tp = tp, .batch = 128, .prompt = 128, .context = 300});
  ASSERT_GT(m.gpu().PhasePower(full_batch, m.gpu().spec().sm_clock_max).value(), tdp)
      << "the case the limit is for";
  std::vector<TraceRequest> requests(128, {0.0, 128, 400, Priority::kHigh});
  const RowResult r = RunRequests(row, requests);
  ASSERT_EQ(r.hp.requests, 128u);
  ASSERT_GT(r.decode_seconds, 0);
  EXPECT_LE(r.decode_energy_j / r.decode_seconds / tp, tdp + 1e-6);
}

TEST(RowSimulatorTest, ContinuousBatchingJoinsNewPromptsToRunningDecodes) {
  RowConfig row = OneHpServer();
  // The second request arrives while the first decodes: it joins the batch at the next step
  // instead of waiting for the first to finish.
  const RowResult r =
      RunRequests(row, {{0.0, 500, 400, Priority::kHigh}, {1.0, 500, 400, Priority::kHigh}});
  EXPECT_LT(r.hp.ttft.max(), 1.0);
  EXPECT_EQ(r.hp.requests, 2u);
  // The first's run of decode steps cut where the second arrived; two prefills; the run between
  // and the run after the first finished.
  EXPECT_EQ(r.interrupted_runs, 1u);
  EXPECT_EQ(r.prefill_iterations, 2u);
  EXPECT_EQ(r.decode_runs, 3u);
}

TEST(RowSimulatorTest, RouterSpreadsLoadOverInstancesOfTheRightClass) {
  const ResolvedScenario s = Default();
  RowConfig row = s.row;
  row.servers = 4;
  row.hp_server_fraction = 0.5;
  std::vector<TraceRequest> reqs;
  for (int i = 0; i < 40; ++i) {
    reqs.push_back({i * 0.01, 800, 200, i % 2 ? Priority::kLow : Priority::kHigh});
  }
  std::vector<int> per_server(4, 0);
  VectorSource source(reqs);
  auto policy = policy::MakePolicy("none", {});
  RunOptions options;
  std::vector<std::pair<int, Priority>> seen;
  options.on_request = [&](const RequestResult& r) { seen.emplace_back(r.server, r.priority); };
  ASSERT_TRUE(SimulateRow(row, source, **policy, options));
  ASSERT_EQ(seen.size(), 40u);
  for (const auto& [server, priority] : seen) ++per_server[static_cast<std::size_t>(server)];
  // Servers 1 and 3 are HP (every other one), 0 and 2 LP; each gets half its class.
  for (const auto& [server, priority] : seen) {
    EXPECT_EQ(server % 2 == 1, priority == Priority::kHigh) << server;
  }
  for (int n : per_server) EXPECT_EQ(n, 10);
}

TEST(RowSimulatorTest, RejectsRequestsWithoutAClassOrAServerForIt) {
  const ResolvedScenario s = Default();
  RowConfig row = s.row;
  row.servers = 2;
  row.hp_server_fraction = 1;
  auto policy = policy::MakePolicy("none", {});
  VectorSource unspecified({{0.0, 10, 10, Priority::kUnspecified}});
  auto a = SimulateRow(row, unspecified, **policy);
  ASSERT_FALSE(a);
  EXPECT_NE(a.error().message().find("no priority"), std::string::npos);
  VectorSource lp({{0.0, 10, 10, Priority::kLow}});
  auto b = SimulateRow(row, lp, **policy);
  ASSERT_FALSE(b);
  EXPECT_NE(b.error().message().find("no LP servers"), std::string::npos);
}

// The macro steps (a run of decode steps as one event) against one event per decode iteration,
// on the real Azure traces, with and without a controller changing clocks mid-run.
TEST(RowSimulatorTest, MacroStepsMatchPerIterationSteppingOnRealTraces) {
  ResolvedScenario s = Default();
  // The third case: chunked prefill (issue 45), whose decode runs between chunks are closed-form
  // as well.
  for (const std::string policy : {"none", "polca", "polca-chunked"}) {
    s.row.instance.max_num_batched_tokens = policy == "polca-chunked" ? 2048 : 0;
    RowResult results[2];
    for (bool macro : {true, false}) {
      s.row.macro_steps = macro;
      RunOptions options;
      // 12 servers in a budget for 10.5: the controller caps, so clocks change mid-run, and
      // never brakes (a brake stalls whichever requests run in the second it lands, so one second
      // earlier or later moves a quantile by a percent: not what this compares).
      s.row.power.budget = core::Watts(10.5 * s.row.server.max_system_power.value());
      auto r = RunScenario(s, policy == "polca-chunked" ? "polca" : policy, 12, "azure", options);
      ASSERT_TRUE(r) << r.error().message();
      results[macro ? 0 : 1] = std::move(*r);
    }
    const RowResult& fast = results[0];
    const RowResult& slow = results[1];
    EXPECT_LT(fast.events_processed * 3, slow.events_processed) << "macro steps save events";
    if (policy != "none") {
      EXPECT_GT(fast.cap_actions, 0u);
      EXPECT_EQ(fast.brake_events + slow.brake_events, 0u);
    }
    const auto near = [&policy](double a, double b, const char* what) {
      EXPECT_NEAR(a, b, std::abs(b) * 0.005) << what << " " << policy;
    };
    for (const auto& [f, r] : {std::pair{&fast.hp, &slow.hp}, std::pair{&fast.lp, &slow.lp}}) {
      EXPECT_EQ(f->requests, r->requests);
      near(f->ttft.Quantile(0.5), r->ttft.Quantile(0.5), "TTFT P50");
      near(f->ttft.Quantile(0.99), r->ttft.Quantile(0.99), "TTFT P99");
      near(f->tbt.Quantile(0.5), r->tbt.Quantile(0.5), "TBT P50");
      near(f->e2e.Quantile(0.5), r->e2e.Quantile(0.5), "E2E P50");
      near(f->e2e.Quantile(0.99), r->e2e.Quantile(0.99), "E2E P99");
    }
    near(fast.energy_j, slow.energy_j, "energy");
    near(fast.peak_w, slow.peak_w, "peak power");
    near(fast.mean_w, slow.mean_w, "mean power");
    if (policy == "polca") {
      EXPECT_GT(fast.cap_actions, 0u) << "the controller acted";
    }
  }
}

// Issue 45: chunked prefill under a token budget. A long prompt arrives while a short request
// decodes its last few tokens: whole, the long prefill is one iteration that stalls the decode
// for seconds; chunked, each chunk's iteration also gives the decode a token, so the short
// request ends within a few chunks, and the long prompt's own first token comes later (more
// iterations, each also paying for the decodes and reading the weights again).
TEST(RowSimulatorTest, ChunkedPrefillKeepsDecodesGoingBesideALongPrompt) {
  RowConfig row = OneHpServer();
  row.instance.max_prefill_tokens = 32768;
  const std::vector<TraceRequest> requests = {{0.0, 200, 6, Priority::kHigh},
                                              {0.2, 30000, 10, Priority::kHigh}};
  std::vector<RequestResult> by_budget[2];
  for (int budget : {0, 2048}) {
    row.instance.max_num_batched_tokens = budget;
    VectorSource source(requests);
    auto policy = policy::MakePolicy("none", {});
    ASSERT_TRUE(policy);
    RunOptions options;
    std::vector<RequestResult>& out = by_budget[budget > 0 ? 1 : 0];
    options.on_request = [&out](const RequestResult& r) { out.push_back(r); };
    ASSERT_TRUE(SimulateRow(row, source, **policy, options));
    ASSERT_EQ(out.size(), 2u);
    std::sort(out.begin(), out.end(), [](const RequestResult& a, const RequestResult& b) {
      return a.arrival_s < b.arrival_s;
    });
  }
  const std::vector<RequestResult>& whole = by_budget[0];
  const std::vector<RequestResult>& chunked = by_budget[1];
  const double long_prefill = whole[1].ttft_s;
  ASSERT_GT(long_prefill, 2.0) << "the long prompt must take seconds to prefill";
  EXPECT_GT(whole[0].e2e_s, long_prefill) << "whole: the short request waits out the prefill";
  EXPECT_LT(chunked[0].e2e_s, whole[0].e2e_s * 0.6)
      << "chunked " << chunked[0].e2e_s << " s, whole " << whole[0].e2e_s << " s";
  EXPECT_GT(chunked[1].ttft_s, whole[1].ttft_s);
}

// A prompt larger than the token budget alone is split into budget-sized chunks: its TTFT is the
// sum of those iterations, longer than one whole prefill (each chunk reads the weights again).
TEST(RowSimulatorTest, AChunkedPromptTakesOneIterationPerChunk) {
  RowConfig row = OneHpServer();
  row.instance.max_num_batched_tokens = 1024;
  const RowResult r = RunRequests(row, {{0.0, 4000, 2, Priority::kHigh}});
  // ceil(4000 / 1024) = 4 prefill iterations, then one decode step.
  EXPECT_EQ(r.iterations, 5u);
  const model::InferenceModel& m = *row.model;
  const core::Megahertz f = m.gpu().spec().sm_clock_max;
  double chunks = 0;
  for (int done = 0; done < 4000; done += 1024) {
    const int c = std::min(1024, 4000 - done);
    chunks += m.gpu().Time(m.PrefillPhaseForBatch(8, 1, c, double(c) * (2.0 * done + c)), f).time_s;
  }
  EXPECT_NEAR(r.hp.ttft.Quantile(0.5), chunks, chunks * 0.001);
}

// Prefix caching: a cached system prompt is not prefilled again, so TTFT falls; the server's own
// overhead adds to TTFT and E2E alike.
TEST(RowSimulatorTest, ACachedPrefixShortensTtftAndServerOverheadAddsToIt) {
  RowConfig row = OneHpServer();
  const std::vector<TraceRequest> one = {{0.0, 4000, 20, Priority::kHigh}};
  const RowResult plain = RunRequests(row, one);
  row.instance.prefix_cache.shared_prefix_tokens = 3000;
  const RowResult cached = RunRequests(row, one);
  EXPECT_LT(cached.hp.ttft.Quantile(0.5), plain.hp.ttft.Quantile(0.5) * 0.5);
  const model::InferenceModel& m = *row.model;
  const double rest = m.gpu()
                          .Time(m.PrefillPhaseForBatch(8, 1, 1000, 1000.0 * (2 * 3000 + 1000)),
                                m.gpu().spec().sm_clock_max)
                          .time_s;
  EXPECT_NEAR(cached.hp.ttft.Quantile(0.5), rest, rest * 0.001);
  row.instance.prefix_cache = {};
  row.instance.overhead = {.per_request_s = 0.010, .per_prompt_token_s = 1e-6};
  const RowResult slowed = RunRequests(row, one);
  EXPECT_NEAR(slowed.hp.ttft.Quantile(0.5) - plain.hp.ttft.Quantile(0.5), 0.014, 0.0002);
  // E2E is read from its histogram: within a bucket of its value.
  EXPECT_NEAR(slowed.hp.e2e.Quantile(0.5) - plain.hp.e2e.Quantile(0.5), 0.014,
              plain.hp.e2e.Quantile(0.5) * 0.01);
  EXPECT_EQ(CachedPrefix({.shared_prefix_tokens = 3000, .hit_rate = 0}, 100), 99);
  EXPECT_EQ(CachedPrefix({.shared_prefix_tokens = 0, .hit_rate = 0.5}, 100), 50);
}

// A trace's recorded cached prefix (TraceRequest::cached_tokens, a log's cached_tokens column) is
// that request's own: it shortens its TTFT as the scenario's cache would, and where a request
// records one it overrides the scenario's.
TEST(RowSimulatorTest, ARecordedCachedPrefixShortensThatRequestsTtft) {
  RowConfig row = OneHpServer();
  const TraceRequest plain_request{0.0, 4000, 20, Priority::kHigh};
  TraceRequest one = plain_request;
  const double plain = RunRequests(row, {one}).hp.ttft.Quantile(0.5);
  one.cached_tokens = 3000;
  const double recorded = RunRequests(row, {one}).hp.ttft.Quantile(0.5);
  EXPECT_LT(recorded, plain * 0.5);
  row.instance.prefix_cache.shared_prefix_tokens = 3000;
  EXPECT_DOUBLE_EQ(RunRequests(row, {plain_request}).hp.ttft.Quantile(0.5), recorded);
  // Recorded as none cached: none is, whatever the scenario assumes.
  one.cached_tokens = 0;
  EXPECT_DOUBLE_EQ(RunRequests(row, {one}).hp.ttft.Quantile(0.5), plain);
  EXPECT_EQ(CachedPrefix({}, 100, 100), 99);  // the last token is computed all the same
  EXPECT_EQ(CachedPrefix({.shared_prefix_tokens = 50, .hit_rate = 0}, 100, 10), 10);
}

// The scenario's shared prefix is held once in the KV cache, as vLLM's prefix cache shares its
// blocks: six prompts that each fill a third of the cache but for a few tokens of their own run
// together, where the same prompts with the same cached tokens recorded one by one (whose
// sharing is not known) run two at a time.
TEST(RowSimulatorTest, ASharedPrefixIsHeldOnceInTheKvCache) {
  RowConfig row = OneHpServerWithKvCache(12000);
  row.instance.max_num_batched_tokens = 0;  // whole prompts: admission by memory alone
  const int prompt = 4000;
  const int own = 100, output = 10;
  std::vector<TraceRequest> recorded(6, TraceRequest{0.0, prompt, output, Priority::kHigh});
  for (TraceRequest& r : recorded) r.cached_tokens = prompt - own;
  const RowResult apart = RunRequests(row, recorded);
  row.instance.prefix_cache.shared_prefix_tokens = prompt - own;
  const RowResult shared =
      RunRequests(row, std::vector<TraceRequest>(6, {0.0, prompt, output, Priority::kHigh}));
  ASSERT_EQ(shared.hp.requests, 6u);
  ASSERT_EQ(apart.hp.requests, 6u);
  // One prefill and the nine decode steps after it, against three such waves.
  EXPECT_EQ(shared.iterations, static_cast<std::uint64_t>(output));
  EXPECT_EQ(apart.iterations, static_cast<std::uint64_t>(3 * output));
  EXPECT_LT(shared.hp.ttft.max(), apart.hp.ttft.max() / 2);
  EXPECT_EQ(shared.hp.preemptions + apart.hp.preemptions, 0u);
  // Each prompt's own tokens still count: with half of each shared, four fit and a fifth waits
  // for the first of them to finish.
  row.instance.prefix_cache.shared_prefix_tokens = prompt / 2;
  const TraceRequest longer{0.0, prompt, 200, Priority::kHigh};
  const RowResult four = RunRequests(row, std::vector<TraceRequest>(4, longer));
  const RowResult five = RunRequests(row, std::vector<TraceRequest>(5, longer));
  EXPECT_LT(four.hp.ttft.max(), four.hp.e2e.Quantile(0));
  EXPECT_GT(five.hp.ttft.max(), four.hp.e2e.Quantile(0));
}

// One instance of one GPU on a server: its seven other GPUs idle, drawing their idle power, so
// an idle row draws what it draws with every GPU in instances.
TEST(RowSimulatorTest, GpusInNoInstanceDrawTheirIdlePower) {
  RowConfig row = OneHpServer();
  row.instance.tp = 4;
  // Ten idle seconds, then a request to end the run.
  const std::vector<TraceRequest> late = {{10.0, 10, 1, Priority::kHigh}};
  const RowResult two = RunRequests(row, late);  // 2 instances of 4 GPUs
  row.instance.instances_per_server = 1;         // 1 instance, 4 GPUs in none
  const RowResult one = RunRequests(row, late);
  EXPECT_EQ(one.hp.requests, 1u);
  EXPECT_GT(one.mean_w, 0);
  EXPECT_NEAR(one.mean_w, two.mean_w, two.mean_w * 0.001);
  EXPECT_EQ(*InstancesPerServer(row.instance, 8, "dgx-a100"), 1);
  row.instance.instances_per_server = 3;  // 3 x tp 4 on 8 GPUs
  EXPECT_FALSE(InstancesPerServer(row.instance, 8, "dgx-a100"));
}

TEST(RowSimulatorTest, ServingSettingsThatCannotHoldAreRefused) {
  InstanceConfig instance;
  instance.max_num_batched_tokens = 64;  // below max_batch_sequences (128)
  EXPECT_FALSE(ValidateServing(instance));
  instance.max_num_batched_tokens = 8192;
  EXPECT_TRUE(ValidateServing(instance));
  instance.prefix_cache = {.shared_prefix_tokens = 10, .hit_rate = 0.5};
  EXPECT_FALSE(ValidateServing(instance));
  instance.prefix_cache = {.shared_prefix_tokens = 0, .hit_rate = 1.0};
  EXPECT_FALSE(ValidateServing(instance));
  instance.prefix_cache = {};
  instance.overhead.per_request_s = -1;
  EXPECT_FALSE(ValidateServing(instance));
}

TEST(RowSimulatorTest, SameInputsGiveIdenticalResults) {
  const ResolvedScenario s = Default();
  RowResult r[2];
  for (int i = 0; i < 2; ++i) {
    auto run = RunScenario(s, "polca", 6, "azure", {});
    ASSERT_TRUE(run);
    r[i] = std::move(*run);
  }
  EXPECT_EQ(r[0].energy_j, r[1].energy_j);
  EXPECT_EQ(r[0].events_processed, r[1].events_processed);
  ASSERT_EQ(r[0].power.size(), r[1].power.size());
  for (std::size_t k = 0; k < r[0].power.size(); ++k) {
    ASSERT_EQ(r[0].power[k].row_w, r[1].power[k].row_w) << k;
  }
  EXPECT_EQ(r[0].hp.e2e.Quantile(0.99), r[1].hp.e2e.Quantile(0.99));
}

// A policy stepped beside a run (RunOptions::shadows) is quiet when it never acts there, and its
// own run is then that run, event for event; one that acts is not quiet.
TEST(RowSimulatorTest, AQuietShadowsRunIsTheRunItShadowed) {
  ResolvedScenario s = Default();
  auto uncapped = RunScenario(s, "none", 12, "azure", {});
  ASSERT_TRUE(uncapped);
  // A budget the row peaks at 90% of: above POLCA's T1, under the brake.
  s.row.power.budget = core::Watts(uncapped->peak_w / 0.9);
  auto brake_only = policy::MakePolicy("brake-only", s.params);
  auto polca = policy::MakePolicy("polca", s.params);
  ASSERT_TRUE(brake_only && polca);
  RunOptions options;
  options.shadows = {brake_only->get(), polca->get()};
  auto shadowed = RunScenario(s, "none", 12, "azure", options);
  ASSERT_TRUE(shadowed);
  EXPECT_EQ(shadowed->quiet_shadows, (std::vector<bool>{true, false}));
  EXPECT_EQ(shadowed->energy_j, uncapped->energy_j);  // shadows change nothing of the run
  auto own = RunScenario(s, "brake-only", 12, "azure", {});
  auto capped = RunScenario(s, "polca", 12, "azure", {});
  ASSERT_TRUE(own && capped);
  EXPECT_EQ(own->events_processed, shadowed->events_processed);
  EXPECT_EQ(own->energy_j, shadowed->energy_j);
  EXPECT_EQ(own->peak_w, shadowed->peak_w);
  EXPECT_EQ(own->hp.e2e.Quantile(0.5), shadowed->hp.e2e.Quantile(0.5));
  EXPECT_EQ(own->lp.e2e.Quantile(0.99), shadowed->lp.e2e.Quantile(0.99));
  EXPECT_GT(capped->cap_actions, 0u);  // POLCA did act, as its shadow said
  // A run whose own policy acts is no shadow's run: none is quiet on it.
  auto fresh = policy::MakePolicy("brake-only", s.params);  // a policy serves one run
  ASSERT_TRUE(fresh);
  options.shadows = {fresh->get()};
  auto under_polca = RunScenario(s, "polca", 12, "azure", options);
  ASSERT_TRUE(under_polca);
  EXPECT_EQ(under_polca->quiet_shadows, std::vector<bool>{false});
}

// A policy stepped every second, whatever its state (RowPolicy::QuietBelow 0).
class SteppedEverySecond final : public policy::RowPolicy {
 public:
  explicit SteppedEverySecond(std::unique_ptr<policy::RowPolicy> inner)
      : inner_(std::move(inner)) {}
  std::string name() const override { return inner_->name(); }
  std::vector<std::string> states() const override { return inner_->states(); }
  using RowPolicy::Step;
  void Step(const policy::Observation& obs, policy::Decision* out) override {
    ++steps;
    inner_->Step(obs, out);
  }
  int steps = 0;

 private:
  std::unique_ptr<policy::RowPolicy> inner_;
};

// Steps skipped while a policy and its row are at rest (RowPolicy::QuietBelow,
// RowController::Resting) would have changed nothing: each policy's run, and its brake-only
// shadow's verdict, are those of stepping it every second, on a row that goes over its budget
// (POLCA caps and the brake engages and releases; the uncapped row would escalate if anything
// were unconfirmed).
TEST(RowSimulatorTest, StepsSkippedAtRestChangeNothing) {
  ResolvedScenario s = Default();
  auto probe = RunScenario(s, "none", 12, "azure", {});
  ASSERT_TRUE(probe);
  s.row.power.budget = core::Watts(probe->peak_w / 1.05);
  // The brake engages under the budget too, where the controller itself never acts.
  s.params.brake_threshold = 0.98;
  s.params.brake_release = 0.93;
  for (const std::string name : {"none", "polca", "brake-only"}) {
    SCOPED_TRACE(name);
    auto inner = policy::MakePolicy(name, s.params);
    ASSERT_TRUE(inner);
    EXPECT_GT((*inner)->QuietBelow(), 0.5);  // in its normal state
    SteppedEverySecond stepped(std::move(*inner));
    ASSERT_EQ(stepped.QuietBelow(), 0);
    std::vector<RowResult> runs;
    for (const bool every : {false, true}) {
      auto brake_only = policy::MakePolicy("brake-only", s.params);
      auto own = policy::MakePolicy(name, s.params);
      ASSERT_TRUE(brake_only && own);
      RunOptions options;
      options.shadows = {brake_only->get()};
      options.keep_target_changes = true;
      auto source = MakeWorkload(s.scenario, "azure", 12, HpServers(12, s.row.hp_server_fraction),
                                 s.scenario.seed);
      ASSERT_TRUE(source);
      RowConfig row = s.row;  // as RunScenario makes it
      row.servers = 12;
      row.control.brake_release = s.params.brake_release;
      auto run = SimulateRow(row, **source, every ? stepped : **own, options);
      ASSERT_TRUE(run) << run.error().message();
      runs.push_back(std::move(*run));
    }
    EXPECT_GT(stepped.steps, 3000);  // an hour of steps, every one taken
    const RowResult& skipped = runs[0];
    const RowResult& every = runs[1];
    EXPECT_GT(every.over_budget_episodes + every.brake_events + every.cap_actions, 0u);
    EXPECT_EQ(skipped.events_processed, every.events_processed);
    EXPECT_EQ(skipped.energy_j, every.energy_j);
    EXPECT_EQ(skipped.peak_w, every.peak_w);
    EXPECT_EQ(skipped.over_budget_s, every.over_budget_s);
    EXPECT_EQ(skipped.brake_events, every.brake_events);
    EXPECT_EQ(skipped.brake_seconds, every.brake_seconds);
    EXPECT_EQ(skipped.cap_actions, every.cap_actions);
    EXPECT_EQ(skipped.uncap_actions, every.uncap_actions);
    EXPECT_EQ(skipped.capped_server_seconds, every.capped_server_seconds);
    EXPECT_EQ(skipped.states, every.states);
    EXPECT_EQ(skipped.state_seconds, every.state_seconds);
    ASSERT_EQ(skipped.events.size(), every.events.size());
    for (std::size_t k = 0; k < every.events.size(); ++k) {
      EXPECT_EQ(skipped.events[k].at, every.events[k].at);
      EXPECT_EQ(skipped.events[k].reason, every.events[k].reason);
    }
    EXPECT_EQ(skipped.target_changes.size(), every.target_changes.size());
    EXPECT_EQ(skipped.quiet_shadows, every.quiet_shadows);
    EXPECT_EQ(skipped.hp.e2e.Quantile(0.5), every.hp.e2e.Quantile(0.5));
    EXPECT_EQ(skipped.lp.e2e.Quantile(0.99), every.lp.e2e.Quantile(0.99));
  }
}

TEST(RowSimulatorTest, PolcaCapsLowPriorityFirstAndTheBrakeCatchesOverload) {
  ResolvedScenario s = Default();
  const double server_max = s.row.server.max_system_power.value();
  // 12 servers in a budget for 10: POLCA caps LP, HP latency barely moves.
  s.row.power.budget = core::Watts(10 * server_max);
  auto polca = RunScenario(s, "polca", 12, "azure", {});
  auto none = RunScenario(s, "none", 12, "azure", {});
  ASSERT_TRUE(polca && none);
  EXPECT_GT(polca->cap_actions, 0u);
  EXPECT_GT(polca->capped_server_seconds, 0);
  const double hp_change = polca->hp.e2e.Quantile(0.5) / none->hp.e2e.Quantile(0.5) - 1;
  const double lp_change = polca->lp.e2e.Quantile(0.5) / none->lp.e2e.Quantile(0.5) - 1;
  EXPECT_LT(hp_change, lp_change + 1e-9);
  // A budget below the idle row: every policy with a brake brakes; none overshoots.
  s.row.power.budget = core::Watts(12 * s.row.server.non_gpu_idle_power.value());
  auto brake = RunScenario(s, "brake-only", 12, "azure", {});
  auto unguarded = RunScenario(s, "none", 12, "azure", {});
  ASSERT_TRUE(brake && unguarded);
  EXPECT_GE(brake->brake_events, 1u);
  EXPECT_GT(brake->brake_seconds, 0);
  EXPECT_EQ(unguarded->brake_events, 0u);
  EXPECT_GT(unguarded->over_budget_s, 0);
  // The brake (288 MHz) slows compute-bound prefill ~5x; memory-bound decode much less.
  EXPECT_GT(brake->hp.ttft.Quantile(0.5), unguarded->hp.ttft.Quantile(0.5) * 2);
  EXPECT_GT(brake->hp.e2e.Quantile(0.5), unguarded->hp.e2e.Quantile(0.5) * 1.1);
}

// Every engine_window each server reports its engine's last window: the share of its tokens that
// were prompt tokens, its queue and batch (what an agent scrapes from vLLM), for mix-aware to rank
// them on.
TEST(RowSimulatorTest, ServersReportTheirEnginesWindows) {
  ResolvedScenario s = Default();
  s.row.power.budget = core::Watts(10 * s.row.server.max_system_power.value());
  std::vector<policy::RowView> views;
  RunOptions options;
  options.on_control_view = [&views](const policy::RowView& v) { views.push_back(v); };
  auto mix = RunScenario(s, "mix-aware", 12, "azure", options);
  ASSERT_TRUE(mix) << mix.error().message();
  ASSERT_GT(views.size(), 100u);
  int windows = 0;
  for (const policy::RowView& v : views) {
    const double t_s = core::ToSeconds(v.now);
    for (const policy::ServerReport& r : v.servers) {
      if (t_s < 10) {
        EXPECT_FALSE(r.serving) << "no window has ended before 10 s";
        continue;
      }
      ASSERT_TRUE(r.serving) << t_s;
      EXPECT_GE(r.serving->prefill_share, 0);
      EXPECT_LE(r.serving->prefill_share, 1);
      EXPECT_GE(r.serving->waiting, 0);
      EXPECT_LT(r.serving->age, s.row.power.engine_window);
      windows += r.serving->age == core::Duration::zero() ? 1 : 0;
    }
  }
  EXPECT_EQ(windows, 12 * static_cast<int>(core::ToSeconds(views.back().now) / 10));
  EXPECT_GT(mix->capped_server_seconds, 0);
  // Without windows (engine_window 0) the servers report none.
  s.row.power.engine_window = core::Duration::zero();
  views.clear();
  ASSERT_TRUE(RunScenario(s, "mix-aware", 12, "azure", options));
  for (const policy::RowView& v : views) {
    for (const policy::ServerReport& r : v.servers) EXPECT_FALSE(r.serving);
  }
}

// An idle server draws its GPUs' idle power and the rest of the server's idle floor; a busy one
// more of both (model::NonGpuPower), so a constant non-GPU draw of the same level at load would
// meter more power at idle and the same with every GPU at TDP.
TEST(RowSimulatorTest, TheRestOfTheServerFollowsItsGpus) {
  RowConfig row = OneHpServer();
  const double gpus_idle_w = 8 * row.model->gpu().spec().idle_power.value();
  // One request, then an hour of nothing: the first metered second after it is the idle row.
  const RowResult r =
      RunRequests(row, {{0.0, 1000, 50, Priority::kHigh}, {3600.0, 10, 2, Priority::kHigh}});
  double idle_w = 1e9, busy_w = 0;
  for (const PowerSample& p : r.power) {
    idle_w = std::min(idle_w, p.row_w);
    busy_w = std::max(busy_w, p.row_w);
  }
  EXPECT_NEAR(idle_w, gpus_idle_w + row.server.non_gpu_idle_power.value(), 1e-6);
  const double gpus_busy_w = busy_w - idle_w;  // above idle, GPUs and the rest together
  EXPECT_GT(row.server.non_gpu_power, row.server.non_gpu_idle_power);
  const double slope = model::NonGpuSlope(row.server, row.model->gpu().spec());
  // The busiest second holds the prefill: its rise above idle is the GPUs' times (1 + slope).
  EXPECT_GT(gpus_busy_w, 0);
  row.server.non_gpu_idle_power = row.server.non_gpu_power;  // constant at the load level
  const RowResult flat =
      RunRequests(row, {{0.0, 1000, 50, Priority::kHigh}, {3600.0, 10, 2, Priority::kHigh}});
  double flat_idle_w = 1e9, flat_busy_w = 0;
  for (const PowerSample& p : flat.power) {
    flat_idle_w = std::min(flat_idle_w, p.row_w);
    flat_busy_w = std::max(flat_busy_w, p.row_w);
  }
  EXPECT_NEAR(flat_idle_w, gpus_idle_w + row.server.non_gpu_power.value(), 1e-6);
  EXPECT_NEAR(busy_w - idle_w, (flat_busy_w - flat_idle_w) * (1 + slope), 1e-6);
}

TEST(RowSimulatorTest, CapsTakeEffectOnlyAfterTheirActuationDelay) {
  ResolvedScenario s = Default();
  s.row.power.budget = core::Watts(10 * s.row.server.max_system_power.value());
  // Out-of-band caps slower than the hour-long trace: ordered, never in force.
  s.row.power.cap_delay = std::chrono::hours(10);
  auto never = RunScenario(s, "polca", 12, "azure", {});
  s.row.power.in_band = true;  // NVML: milliseconds
  auto fast = RunScenario(s, "polca", 12, "azure", {});
  ASSERT_TRUE(never && fast);
  EXPECT_GT(never->cap_actions, 0u);
  EXPECT_EQ(never->capped_server_seconds, 0);
  EXPECT_GT(fast->capped_server_seconds, 0);
}

// A lowered budget (the grid's demand response) is met by caps within its time to comply, the
// brake guarding the provisioned budget until then; each event says how the row met it.
TEST(RowSimulatorTest, ALoweredBudgetIsMetByCapsWithinItsTimeAndReported) {
  ResolvedScenario s = Default();
  auto probe = RunScenario(s, "none", 12, "azure", {});
  ASSERT_TRUE(probe);
  s.row.power.budget = core::Watts(probe->peak_w / 0.97);
  const auto runs = [&](core::Duration comply_within) {
    auto schedule = policy::BudgetSchedule::Make({{.start = std::chrono::minutes(20),
                                                   .length = std::chrono::minutes(20),
                                                   .shed = 0.10,
                                                   .comply_within = comply_within,
                                                   .reason = "demand response"}});
    EXPECT_TRUE(schedule) << schedule.error().message();
    s.row.power.budget_schedule = *schedule;
    std::map<std::string, RowResult> out;
    for (const std::string name : {"none", "brake-only", "polca"}) {
      auto run = RunScenario(s, name, 12, "azure", {});
      EXPECT_TRUE(run) << run.error().message();
      out[name] = std::move(*run);
    }
    return out;
  };
  // When the brake first engaged in the event, in seconds from its start (-1: never).
  const auto first_brake = [](const RowResult& r) {
    for (const policy::Event& e : r.events) {
      const double at = core::ToSeconds(e.at);
      if (at >= 1200 && at < 2400 && e.to == "brake") return at - 1200;
    }
    return -1.0;
  };
  const std::map<std::string, RowResult> given = runs(std::chrono::seconds(60));
  for (const auto& [name, run] : given) {
    SCOPED_TRACE(name);
    ASSERT_EQ(run.budget_events.size(), 1u);
    const BudgetEvent& e = run.budget_events[0];
    EXPECT_EQ(e.reason, "demand response");
    EXPECT_DOUBLE_EQ(e.start_s, 1200);
    EXPECT_DOUBLE_EQ(e.end_s, 2400);
    EXPECT_DOUBLE_EQ(e.budget_w, s.row.power.budget.value() * 0.9);
    EXPECT_DOUBLE_EQ(e.comply_within_s, 60);
    EXPECT_NEAR(e.metered_s, 1200, 1);
    EXPECT_GT(e.power_before_w, 0);
    EXPECT_GT(e.hp_e2e.count(), 0u);
    EXPECT_GT(e.lp_e2e.count(), 0u);
    ASSERT_TRUE(e.compliance.complied_after_s);
    EXPECT_GE(run.brake_events, e.brake_events);
    // The brake guards the provisioned budget while the caps have their time to act.
    const double brake = first_brake(run);
    EXPECT_TRUE(brake < 0 || brake >= 60) << brake;
  }
  // The uncapped row goes over the lowered budget and never brakes; POLCA's caps keep it over
  // for less, at a latency cost to LP first.
  const BudgetEvent& none = given.at("none").budget_events[0];
  const BudgetEvent& polca = given.at("polca").budget_events[0];
  EXPECT_EQ(none.brake_events, 0u);
  EXPECT_GT(none.compliance.over_after_deadline_s, 0);
  EXPECT_LT(polca.compliance.over_after_deadline_s, none.compliance.over_after_deadline_s);
  EXPECT_LT(polca.energy_j, none.energy_j);
  EXPECT_GT(polca.lp_e2e.Quantile(0.5), none.lp_e2e.Quantile(0.5));
  // With a second to comply, the brake meets the lowered budget at once.
  const std::map<std::string, RowResult> at_once = runs(std::chrono::seconds(1));
  const double brake = first_brake(at_once.at("brake-only"));
  EXPECT_GE(brake, 0);
  EXPECT_LT(brake, 60);
}

}  // namespace
}  // namespace headroom::sim
