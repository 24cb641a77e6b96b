#include "sim/scenario.h"

#include <fstream>
#include <tuple>

#include <gtest/gtest.h>

#include "sim/capacity_planner.h"
#include "sim/scenario_run.h"
#include "sim/testing/drain.h"
#include "sim/workload.h"

namespace headroom::sim {
namespace {

std::string Minimal(const std::string& extra = "") {
  return "name: t\nrow:\n  server: dgx-a100\n  servers: 4\nserving:\n  model: llama2-70b\n"
         "workload:\n  hp_rate_per_server: 0.5\n  lp_rate_per_server: 0.5\n" +
         extra;
}

TEST(ScenarioTest, TheDefaultScenarioParsesAndResolves) {
  auto s = LoadScenario(kDefaultScenario);
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->servers, 40);
  EXPECT_EQ(s->budget_servers, 40);
  ASSERT_TRUE(s->workload.synth);
  EXPECT_EQ(s->workload.synth->duration, std::chrono::days(7));
  EXPECT_DOUBLE_EQ(s->workload.target_baseline_peak, 0.79);
  auto hardware = catalog::HardwareCatalog::Embedded();
  auto models = catalog::ModelCatalog::Embedded();
  auto engines = catalog::EngineCatalog::Embedded();
  auto r = Resolve(*s, {&*hardware, &*models, &*engines});
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(s->engine, "splitwise-sim");
  EXPECT_DOUBLE_EQ(r->row.power.budget.value(), 40 * 6500.0);
  EXPECT_EQ(r->row.power.cap_delay, std::chrono::seconds(40));
  EXPECT_EQ(r->row.power.engine_window, std::chrono::seconds(10));
}

TEST(ScenarioTest, EngineWindowIsAPowerKey) {
  auto off = ParseScenario(Minimal("power:\n  engine_window: 0s\n"), "e.yaml");
  ASSERT_TRUE(off) << off.error().message();
  EXPECT_EQ(off->power.engine_window, core::Duration::zero());
  auto every = ParseScenario(Minimal("power:\n  engine_window: 30s\n"), "e.yaml");
  ASSERT_TRUE(every) << every.error().message();
  EXPECT_EQ(every->power.engine_window, std::chrono::seconds(30));
  for (const char* bad : {"power:\n  engine_window: -1s\n", "power:\n  engine_window: soon\n"}) {
    auto rejected = ParseScenario(Minimal(bad), "e.yaml");
    ASSERT_FALSE(rejected) << bad;
    EXPECT_NE(rejected.error().message().find("engine_window"), std::string::npos)
        << rejected.error().message();
  }
}

// Issue 50: the grid's budget schedule and ramp limit are power keys, checked where they are
// read; a ramp limit of zero is an error (leave the key out for none).
TEST(ScenarioTest, TheGridsScheduleAndRampLimitArePowerKeys) {
  auto ok = ParseScenario(
      Minimal("power:\n  ramp_up_w_per_s: 2000\n  ramp_window: 5s\n  budget_schedule:\n"
              "    - {daily: \"17:00\", for: 3h, shed: 25%, reason: evening}\n"),
      "e.yaml");
  ASSERT_TRUE(ok) << ok.error().message();
  EXPECT_DOUBLE_EQ(ok->power.ramp_up_w_per_s, 2000);
  EXPECT_EQ(ok->power.ramp_window, std::chrono::seconds(5));
  ASSERT_EQ(ok->power.budget_schedule.windows().size(), 1u);
  EXPECT_DOUBLE_EQ(ok->power.budget_schedule.windows()[0].shed, 0.25);
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {"power:\n  ramp_up_w_per_s: 0\n", "power.ramp_up_w_per_s"},
           {"power:\n  ramp_up_w_per_s: -5\n", "power.ramp_up_w_per_s"},
           {"power:\n  ramp_window: 0s\n", "power.ramp_window"},
           {"power:\n  budget_schedule:\n    - {daily: \"17:00\", for: 3h, shed: 120%, reason: "
            "r}\n",
            "power.budget_schedule[0]"}}) {
    auto rejected = ParseScenario(Minimal(bad), "e.yaml");
    ASSERT_FALSE(rejected) << bad;
    EXPECT_NE(rejected.error().message().find(says), std::string::npos)
        << rejected.error().message();
  }
}

// Issue 50: the demand response a plan asks of its answers, read and checked with the plan's keys.
TEST(ScenarioTest, APlansDemandResponseIsReadAndChecked) {
  auto ok = ParseScenario(
      Minimal("plan:\n  demand_response: {shed: 25%, for: 3h, comply_within: 30s}\n"), "d.yaml");
  ASSERT_TRUE(ok) << ok.error().message();
  ASSERT_TRUE(ok->plan_demand_response.has_value());
  EXPECT_DOUBLE_EQ(ok->plan_demand_response->shed, 0.25);
  EXPECT_EQ(ok->plan_demand_response->length, std::chrono::hours(3));
  EXPECT_EQ(ok->plan_demand_response->comply_within, std::chrono::seconds(30));
  auto plain = ParseScenario(Minimal("plan:\n  demand_response: {shed: 10%}\n"), "d.yaml");
  ASSERT_TRUE(plain) << plain.error().message();
  EXPECT_EQ(plain->plan_demand_response->length, std::chrono::hours(3));
  EXPECT_EQ(plain->plan_demand_response->comply_within, std::chrono::seconds(60));
  EXPECT_FALSE(ParseScenario(Minimal(""), "d.yaml")->plan_demand_response.has_value());
  for (const auto& [bad, says] : std::vector<std::pair<std::string, std::string>>{
           {"plan:\n  demand_response: {shed: 0%}\n", "not in (0%, 100%)"},
           {"plan:\n  demand_response: {shed: 25%, for: 2d}\n", "not in (0, 24h]"},
           {"plan:\n  demand_response: {shed: 25%, for: 1h, comply_within: 2h}\n",
            "shorter than the event"},
           {"plan:\n  demand_response: {shed: 25%, soon: yes}\n", "soon"},
           {"plan:\n  demand_response: {for: 1h}\n", "shed"}}) {
    auto rejected = ParseScenario(Minimal(bad), "d.yaml");
    ASSERT_FALSE(rejected) << bad;
    EXPECT_NE(rejected.error().message().find(says), std::string::npos)
        << rejected.error().message();
    EXPECT_NE(rejected.error().message().find("d.yaml"), std::string::npos)
        << rejected.error().message();
  }
}

// Issue 45: chunked prefill, prefix caching and the server's overhead are serving keys, checked
// where they are read.
TEST(ScenarioTest, ServingKeysOfAModernEngine) {
  const auto with = [](const std::string& serving) {
    return "name: t\nrow:\n  server: dgx-a100\n  servers: 4\nserving:\n  model: llama2-70b\n" +
           serving + "workload:\n  hp_rate_per_server: 0.5\n  lp_rate_per_server: 0.5\n";
  };
  auto s = ParseScenario(with("  max_num_batched_tokens: 2048\n"
                              "  prefix_cache: {shared_prefix_tokens: 500}\n"
                              "  overhead: {per_request: 5ms, per_prompt_token: 2us}\n"),
                         "m.yaml");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->instance.max_num_batched_tokens, 2048);
  EXPECT_EQ(s->instance.prefix_cache.shared_prefix_tokens, 500);
  EXPECT_DOUBLE_EQ(s->instance.overhead.per_request_s, 0.005);
  EXPECT_DOUBLE_EQ(s->instance.overhead.per_prompt_token_s, 2e-6);
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"  max_num_batched_tokens: 64\n", "smaller than one decode batch"},
      {"  max_num_batched_tokens: 1.5\n", "max_num_batched_tokens"},
      {"  prefix_cache: {shared_prefix_tokens: 10, hit_rate: 0.5}\n", "not both"},
      {"  prefix_cache: {hit_rate: 1.0}\n", "hit_rate"},
      {"  prefix_cache: {shared: 10}\n", "shared"},
      {"  overhead: {per_request: -1ms}\n", "per_request"},
      {"  overhead: {per_token: 1ms}\n", "per_token"},
  };
  for (const auto& [text, want] : bad) {
    auto r = ParseScenario(with(text), "m.yaml");
    ASSERT_FALSE(r) << text;
    EXPECT_NE(r.error().message().find("m.yaml"), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find(want), std::string::npos) << r.error().message();
  }
}

// Issue 45: any instance shape, and the serving keys from the command line (--serving).
TEST(ScenarioTest, OneInstanceOfOneGpuOnAServerAndServingOverrides) {
  auto s = ParseScenario(
      "name: t\nrow:\n  server: dgx-a100\n  servers: 1\nserving:\n  model: llama2-7b\n"
      "  tp: 1\n  instances_per_server: 1\nworkload:\n  hp_rate_per_server: 0.5\n"
      "  lp_rate_per_server: 0.5\n",
      "one.yaml");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->instance.instances_per_server, 1);
  auto hardware = catalog::HardwareCatalog::Embedded();
  auto models = catalog::ModelCatalog::Embedded();
  auto engines = catalog::EngineCatalog::Embedded();
  const Catalogs catalogs{&*hardware, &*models, &*engines};
  ASSERT_TRUE(Resolve(*s, catalogs));
  ASSERT_TRUE(SetServing(*s, "tp=4"));
  ASSERT_TRUE(SetServing(*s, "instances_per_server=3"));
  auto too_many = Resolve(*s, catalogs);
  ASSERT_FALSE(too_many);
  EXPECT_NE(too_many.error().message().find("3 instance(s) of 4 GPU(s) do not fit the 8 GPUs"),
            std::string::npos)
      << too_many.error().message();
  ASSERT_TRUE(SetServing(*s, "instances_per_server=2"));
  ASSERT_TRUE(SetServing(*s, "max_num_batched_tokens=2048"));
  ASSERT_TRUE(SetServing(*s, "overhead_per_request=5ms"));
  ASSERT_TRUE(SetServing(*s, "prefix_hit_rate=0.25"));
  EXPECT_EQ(s->instance.max_num_batched_tokens, 2048);
  EXPECT_DOUBLE_EQ(s->instance.overhead.per_request_s, 0.005);
  EXPECT_DOUBLE_EQ(s->instance.prefix_cache.hit_rate, 0.25);
  ASSERT_TRUE(Resolve(*s, catalogs));
  ASSERT_TRUE(SetServing(*s, "max_num_batched_tokens=16"));
  auto small = Resolve(*s, catalogs);
  ASSERT_FALSE(small);
  EXPECT_NE(small.error().message().find("smaller than one decode batch"), std::string::npos);
  for (const char* bad : {"tp", "tp=x", "tpp=2", "overhead_per_request=5", "tp=-1"}) {
    auto st = SetServing(*s, bad);
    ASSERT_FALSE(st) << bad;
    EXPECT_NE(st.error().message().find(std::string("--serving ") + bad), std::string::npos)
        << st.error().message();
  }
}

// A scenario that names no engine serves as today's vLLM server does: chunked prefill within
// its defaults for the GPU type (2,048 tokens and 256 sequences on an A100, 8,192 and 1,024 on
// an H100), its server's own time per request; settings the scenario or --serving names win.
TEST(ScenarioTest, TheDefaultEngineBringsItsSchedulerAndServerTime) {
  auto hardware = catalog::HardwareCatalog::Embedded();
  auto models = catalog::ModelCatalog::Embedded();
  auto engines = catalog::EngineCatalog::Embedded();
  const Catalogs catalogs{&*hardware, &*models, &*engines};
  const auto resolve = [&](const std::string& server, const std::string& serving) {
    auto s = ParseScenario("name: t\nrow:\n  server: " + server +
                               "\n  servers: 1\nserving:\n  model: llama2-70b\n" + serving +
                               "workload:\n  hp_rate_per_server: 0.5\n  lp_rate_per_server: 0.5\n",
                           "d.yaml");
    EXPECT_TRUE(s) << s.error().message();
    auto r = Resolve(*s, catalogs);
    EXPECT_TRUE(r) << r.error().message();
    return *r;
  };
  const ResolvedScenario a100 = resolve("dgx-a100", "");
  EXPECT_EQ(a100.row.engine.name, catalog::kDefaultEngine);
  EXPECT_FALSE(a100.row.engine.version.empty());
  EXPECT_EQ(a100.row.instance.max_num_batched_tokens, 2048);
  EXPECT_EQ(a100.row.instance.max_batch_sequences, 256);
  const double server_s = (*engines->Engine(catalog::kDefaultEngine))
                              ->For("a100-80gb-sxm")
                              ->efficiency.server_request_s;
  EXPECT_GT(server_s, 0);
  EXPECT_DOUBLE_EQ(a100.row.instance.overhead.per_request_s, server_s);
  const ResolvedScenario h100 = resolve("dgx-h100", "");
  EXPECT_EQ(h100.row.instance.max_num_batched_tokens, 8192);
  EXPECT_EQ(h100.row.instance.max_batch_sequences, 1024);
  const ResolvedScenario set =
      resolve("dgx-a100", "  max_num_batched_tokens: 4096\n  overhead:\n    per_request: 1ms\n");
  EXPECT_EQ(set.row.instance.max_num_batched_tokens, 4096);
  EXPECT_EQ(set.row.instance.max_batch_sequences, 256);
  EXPECT_DOUBLE_EQ(set.row.instance.overhead.per_request_s, 0.001);
  // The 2023 stack has no scheduler defaults: whole prompts, no server time.
  const ResolvedScenario old = resolve("dgx-a100", "  engine: splitwise-sim\n");
  EXPECT_EQ(old.row.instance.max_num_batched_tokens, 0);
  EXPECT_EQ(old.row.instance.max_batch_sequences, 128);
  EXPECT_EQ(old.row.instance.overhead.per_request_s, 0);
}

TEST(ScenarioTest, ErrorsNameTheFileLineAndField) {
  struct Case {
    std::string text;
    std::string want;
  };
  const std::vector<Case> cases = {
      {Minimal("  colour: red\n"), "colour"},
      {Minimal("power:\n  cap_delay: 40\n"), "cap_delay"},
      {Minimal("policy:\n  t9: 0.5\n"), "t9"},
      {Minimal("serving2: {}\n"), "serving2"},
      {Minimal("workload2: {}\n"), "workload2"},
      {"name: t\nrow:\n  server: dgx-a100\n  servers: -3\nserving:\n  model: x\nworkload: {}\n",
       "servers"},
      // A count is a whole number, never truncated (2.5 was read as 2).
      {"name: t\nrow:\n  server: dgx-a100\n  servers: 2.5\nserving:\n  model: x\nworkload: {}\n",
       "2.5 is not a whole number"},
      {"name: t\nrow:\n  server: dgx-a100\n  budget_servers: 40.5\nserving:\n  model: x\n"
       "workload: {}\n",
       "budget_servers"},
      // The first of two equal keys used to win silently.
      {Minimal("power:\n  cap_delay: 1s\n  cap_delay: 2s\n"), "'cap_delay' is given twice"},
      {Minimal("plan:\n  stress:\n    - {name: g, lode: 1.1}\n"), "unknown stress key"},
      {Minimal("plan:\n  stress:\n    - {name: g, load: 0}\n"), "load 0 must be in [0.1, 10]"},
      {Minimal("plan:\n  stress:\n    - {load: 1.1}\n"), "name"},
      {Minimal("plan:\n  stress:\n    - {name: g, burst_length: 2}\n"), "burst_length"},
      {Minimal("plan:\n  stress:\n    - {name: g, load: 1.1}\n    - {name: g, load: 1.2}\n"),
       "'g' appears twice"},
  };
  for (const Case& c : cases) {
    auto s = ParseScenario(c.text, "row.yaml");
    ASSERT_FALSE(s) << c.text;
    EXPECT_NE(s.error().message().find("row.yaml"), std::string::npos) << s.error().message();
    EXPECT_NE(s.error().message().find(c.want), std::string::npos) << s.error().message();
  }
}

TEST(ScenarioTest, StressCasesFromTheFileAndTheFlagAgree) {
  auto s = ParseScenario(Minimal("plan:\n  stress:\n    - {name: growth, load: 1.1}\n"
                                 "    - {name: bursts, burst_size: 3, burst_length: 5m}\n"),
                         "row.yaml");
  ASSERT_TRUE(s) << s.error().message();
  ASSERT_EQ(s->plan_stress.size(), 2u);
  auto growth = ParseStressCase("growth:load=1.1");
  auto bursts = ParseStressCase("bursts:burst_size=3,burst_length=5m");
  ASSERT_TRUE(growth && bursts);
  EXPECT_EQ(s->plan_stress[0], *growth);
  EXPECT_EQ(s->plan_stress[1], *bursts);
  EXPECT_EQ(DescribeStress(*growth), "growth (load x1.1)");
  EXPECT_EQ(DescribeStress(*bursts), "bursts (bursts x3, bursts 5m long)");
  for (std::string_view bad : {"growth", "growth:", ":load=1", "g:load", "g:load=x", "g:mix=2"}) {
    EXPECT_FALSE(ParseStressCase(bad)) << bad;
  }

  // Applied to a copy: the rates scale, the synthesized shape takes the case's values.
  Scenario base = *s;
  base.workload.synth = SynthParams{};
  auto stressed = Stressed(base, *bursts, "");
  ASSERT_TRUE(stressed) << stressed.error().message();
  EXPECT_EQ(stressed->workload.synth->burst_size, 3);
  EXPECT_EQ(stressed->workload.synth->burst_length, std::chrono::minutes(5));
  EXPECT_EQ(stressed->workload.hp_rate_per_server, base.workload.hp_rate_per_server);
  auto grown = Stressed(base, *growth, "");
  ASSERT_TRUE(grown);
  EXPECT_DOUBLE_EQ(grown->workload.lp_rate_per_server, 1.1 * base.workload.lp_rate_per_server);
  // Bursts on a replayed real trace are an error; load on one is not.
  EXPECT_FALSE(Stressed(base, *bursts, "azure"));
  EXPECT_TRUE(Stressed(base, *growth, "azure"));
}

TEST(ScenarioTest, NonGpuPowerOverridesTheCatalogWithinTheServersLimits) {
  const auto with_row = [](const std::string& keys) {
    return "name: t\nrow:\n  server: dgx-a100\n  servers: 4\n" + keys +
           "serving:\n  model: llama2-70b\n"
           "workload:\n  hp_rate_per_server: 0.5\n  lp_rate_per_server: 0.5\n";
  };
  // Resolved against the catalogs compiled in, over the shipped dgx-a100's 2966 and 3300 W.
  const std::string dir = ::testing::TempDir() + "headroom_non_gpu.yaml";
  for (const auto& [keys, idle, load] :
       {std::tuple{std::string(""), 2966.0, 3300.0},
        std::tuple{std::string("  non_gpu_idle_w: 1040\n  non_gpu_at_load_w: 1400\n"), 1040.0,
                   1400.0},
        std::tuple{std::string("  non_gpu_idle_w: 3300\n"), 3300.0, 3300.0}}) {
    std::ofstream(dir) << with_row(keys);
    auto r = LoadAndResolveBuiltIn(dir);
    ASSERT_TRUE(r) << keys << r.error().message();
    EXPECT_EQ(r->row.server.non_gpu_idle_power, core::Watts(idle)) << keys;
    EXPECT_EQ(r->row.server.non_gpu_power, core::Watts(load)) << keys;
  }
  for (const std::string& bad :
       {std::string("  non_gpu_idle_w: 3400\n"), std::string("  non_gpu_at_load_w: 3400\n")}) {
    std::ofstream(dir) << with_row(bad);
    auto r = LoadAndResolveBuiltIn(dir);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().message().find("does not fit server 'dgx-a100'"), std::string::npos)
        << r.error().message();
  }
}

TEST(ScenarioTest, ResolveChecksTheCatalogAndPolicyConstants) {
  auto hardware = catalog::HardwareCatalog::Embedded();
  auto models = catalog::ModelCatalog::Embedded();
  auto engines = catalog::EngineCatalog::Embedded();
  const Catalogs c{&*hardware, &*models, &*engines};
  // The scenario parses; Resolve refuses it, saying `why`.
  const auto refused = [&c](const std::string& yaml, const std::string& file,
                            const std::string& why) {
    auto scenario = ParseScenario(yaml, file);
    ASSERT_TRUE(scenario) << scenario.error().message();
    auto resolved = Resolve(*scenario, c);
    ASSERT_FALSE(resolved) << file;
    EXPECT_NE(resolved.error().message().find(why), std::string::npos)
        << resolved.error().message();
  };
  refused("name: t\nrow: {server: dgx-a100}\nserving: {model: gpt-9}\nworkload: {}\n", "a.yaml",
          "");
  refused(Minimal("policy:\n  t2: 0.7\n"), "b.yaml", "t2");
  refused(Minimal("power:\n  telemetry_delay: 15s\n"), "d.yaml", "stale_after_s");
  refused("name: t\nrow: {server: dgx-a100}\nserving: {model: llama2-70b, tp: 3}\nworkload: {}\n",
          "c.yaml", "tp 3");
  // Weights that leave no room for a KV cache: which two settings decide it, with the figures.
  refused(
      "name: t\nrow: {server: dgx-a100}\nserving: {model: llama2-70b, memory_fraction: 0.2}\n"
      "workload: {}\n",
      "f.yaml",
      "f.yaml: llama2-70b does not fit on 8 a100-80gb-sxm GPUs: 16.06 GiB of weights per GPU, "
      "16.00 GiB usable (serving.memory_fraction 0.2 of 80 GiB)");
  // An engine without a calibration, and one not calibrated for the row's GPU, name both.
  refused(
      "name: t\nrow: {server: dgx-a100}\nserving: {model: llama2-70b, engine: tgi-9}\n"
      "workload: {}\n",
      "e.yaml", "e.yaml: serving.engine: no serving engine 'tgi-9'");
}

TEST(ScenarioTest, WorkloadLoadGrowsWithServers) {
  auto s = ParseScenario(Minimal(), "m.yaml");
  ASSERT_TRUE(s);
  auto count = [&](int servers) {
    auto src = MakeWorkload(*s, "azure", servers, HpServers(servers, 0.5), 1);
    EXPECT_TRUE(src) << src.error().message();
    int n = 0, hp = 0;
    while (auto r = (*src)->Next()) {
      if (!*r) break;
      ++n;
      hp += (*r)->priority == Priority::kHigh;
    }
    return std::pair{n, hp};
  };
  const auto [n4, hp4] = count(4);
  const auto [n8, hp8] = count(8);
  // 0.5 requests/s per server over the hour of the real traces.
  EXPECT_NEAR(n4, 4 * 0.5 * 3500, 4 * 0.5 * 3500 * 0.1);
  EXPECT_NEAR(static_cast<double>(n8) / n4, 2.0, 0.1);
  EXPECT_NEAR(static_cast<double>(hp4) / n4, 0.5, 0.05);
}

// A user's request log: `rows` requests 10 s apart, every third with a recorded cached prefix,
// every fourth high priority, the rest with no priority.
std::string WriteLog(const std::string& name, int rows) {
  std::string text = "arrival_s,prompt_tokens,output_tokens,cached_tokens,priority\n";
  for (int i = 0; i < rows; ++i) {
    text += std::to_string(10 * i) + "," + std::to_string(500 + 10 * i) + ",50," +
            (i % 3 == 0 ? "400" : "") + "," + (i % 4 == 0 ? "hp" : "") + "\n";
  }
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

std::string AsRecordedScenario(const std::string& log, const std::string& extra = "") {
  return "name: replay\nrow:\n  server: dgx-a100\n  servers: 2\nserving:\n  model: llama2-7b\n"
         "  tp: 1\n  instances_per_server: 1\nworkload:\n  replay: as-recorded\n  trace: " +
         log + "\n" + extra;
}

// workload.replay as-recorded: the log's requests as they are at any row size (not scaled to
// per-server rates), cached tokens and priorities kept, low priority where the log gives none;
// simulated, every row is served once and the run lasts as long as the log.
TEST(ScenarioTest, AsRecordedReplaysTheLogUnscaled) {
  const std::string log = WriteLog("as_recorded.csv", 40);
  auto s = ParseScenario(AsRecordedScenario(log), "replay.yaml");
  ASSERT_TRUE(s) << s.error().message();
  EXPECT_EQ(s->workload.replay, WorkloadReplay::kAsRecorded);
  EXPECT_EQ(s->workload.priority, PriorityAssignment::kByTrace);
  for (int servers : {1, 2, 8}) {
    auto source = MakeWorkload(*s, "", servers, HpServers(servers, 0.5), 1);
    ASSERT_TRUE(source) << source.error().message();
    const std::vector<TraceRequest> got = testing::Drain(**source);
    ASSERT_EQ(got.size(), 40u) << servers;
    for (int i = 0; i < 40; ++i) {
      const TraceRequest& r = got[static_cast<std::size_t>(i)];
      EXPECT_EQ(r.arrival_s, 10.0 * i);
      EXPECT_EQ(r.prompt_tokens, 500 + 10 * i);
      EXPECT_EQ(r.cached_tokens, i % 3 == 0 ? std::optional<int>(400) : std::nullopt);
      EXPECT_EQ(r.priority, i % 4 == 0 ? Priority::kHigh : Priority::kLow);
    }
  }
  // The same log scaled (the default) at 8 servers of 1 request/s each: about 8 x 390 requests.
  Scenario scaled = *s;
  scaled.workload.replay = WorkloadReplay::kScaled;
  auto many = MakeWorkload(scaled, "", 8, 4, 1);
  ASSERT_TRUE(many) << many.error().message();
  EXPECT_GT(testing::Drain(**many).size(), 2000u);

  auto hardware = catalog::HardwareCatalog::Embedded();
  auto models = catalog::ModelCatalog::Embedded();
  auto engines = catalog::EngineCatalog::Embedded();
  auto resolved = Resolve(*s, {&*hardware, &*models, &*engines});
  ASSERT_TRUE(resolved) << resolved.error().message();
  auto run = RunScenario(*resolved, "none", 2, "", {});
  ASSERT_TRUE(run) << run.error().message();
  EXPECT_EQ(run->hp.requests, 10u);
  EXPECT_EQ(run->lp.requests, 30u);
  EXPECT_GE(run->simulated_s, 390);
  EXPECT_LT(run->simulated_s, 400);
  auto plan = PlanCapacity(*resolved, {});
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("a capacity plan scales the load"), std::string::npos)
      << plan.error().message();
}

// What as-recorded cannot mean is refused by name: a key that sets a load or a mix, another
// priority rule, an unknown replay, a --trace that is not one log, a scenario with no one trace.
TEST(ScenarioTest, AsRecordedRefusesWhatItCannotReplay) {
  const std::string log = WriteLog("as_recorded_bad.csv", 3);
  struct Case {
    std::string extra;
    std::string says;
  };
  for (const Case& c :
       {Case{"  hp_rate_per_server: 2\n", "field 'workload.hp_rate_per_server'"},
        Case{"  synth:\n    duration: 1d\n", "field 'workload.synth'"},
        Case{"  hp_request_fraction: 0.2\n", "field 'workload.hp_request_fraction'"},
        Case{"  priority: by-fraction\n", "must be by-trace with replay: as-recorded"}}) {
    auto s = ParseScenario(AsRecordedScenario(log, c.extra), "bad.yaml");
    ASSERT_FALSE(s) << c.extra;
    EXPECT_NE(s.error().message().find(c.says), std::string::npos) << s.error().message();
    EXPECT_NE(s.error().message().find("bad.yaml:"), std::string::npos) << s.error().message();
  }
  std::string bogus = AsRecordedScenario(log);
  bogus.replace(bogus.find("as-recorded"), 11, "as-is");
  auto unknown = ParseScenario(bogus, "bad.yaml");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("unknown replay 'as-is'"), std::string::npos)
      << unknown.error().message();

  auto s = ParseScenario(AsRecordedScenario(log), "replay.yaml");
  ASSERT_TRUE(s) << s.error().message();
  for (const char* trace : {"azure", "synth-week"}) {
    auto source = MakeWorkload(*s, trace, 2, 1, 1);
    ASSERT_FALSE(source) << trace;
    EXPECT_NE(source.error().message().find(std::string("--trace ") + trace), std::string::npos)
        << source.error().message();
  }
  Scenario by_service = *s;  // e.g. the default scenario's workload under --as-recorded
  by_service.workload.priority = PriorityAssignment::kByService;
  auto none = MakeWorkload(by_service, "", 2, 1, 1);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message().find("names no one trace"), std::string::npos)
      << none.error().message();
  // The log as --trace of a scenario whose own trace is another: the log is what is replayed.
  Scenario other = *s;
  other.workload.trace = "azure-conv";
  auto from_flag = MakeWorkload(other, log, 2, 1, 1);
  ASSERT_TRUE(from_flag) << from_flag.error().message();
  EXPECT_EQ(testing::Drain(**from_flag).size(), 3u);
}

// --slo overrides: a count is whole and fits (max_brake_events=1e300 was undefined behaviour).
TEST(ScenarioTest, SloOverridesAreChecked) {
  Slo slo;
  ASSERT_TRUE(SetSlo(slo, "max_brake_events=3"));
  EXPECT_EQ(slo.max_brake_events, 3u);
  ASSERT_TRUE(SetSlo(slo, "lp_p50_e2e_pct=12.5"));
  EXPECT_DOUBLE_EQ(slo.lp_p50_e2e_pct, 12.5);
  for (const char* bad : {"max_brake_events=1e300", "max_brake_events=2.5", "max_brake_events=-1",
                          "lp_p50_e2e_pct=x", "colour=1"}) {
    EXPECT_FALSE(SetSlo(slo, bad)) << bad;
  }
  EXPECT_EQ(slo.max_brake_events, 3u) << "a refused override changes nothing";
}

TEST(ScenarioTest, SloViolationsAreReportedInOrder) {
  RunSummary run, base;
  base.hp.e2e_p50_s = 1.0;
  base.hp.e2e_p99_s = 10.0;
  base.lp.e2e_p50_s = 2.0;
  run = base;
  Slo slo;
  EXPECT_EQ(SloViolation(run, Compare(run, base), slo), "");
  run.hp.e2e_p50_s = 1.02;
  EXPECT_EQ(SloViolation(run, Compare(run, base), slo), "HP P50 +2.0%");
  run.brake_events = 1;
  EXPECT_EQ(SloViolation(run, Compare(run, base), slo), "1 brake event");
  run = base;
  run.over_budget_episodes = 2;
  EXPECT_EQ(SloViolation(run, Compare(run, base), slo), "over budget 2 times");
  run = base;
  run.lp.e2e_p50_s = 2.2;
  EXPECT_EQ(SloViolation(run, Compare(run, base), slo), "LP P50 +10.0%");
}

}  // namespace
}  // namespace headroom::sim
