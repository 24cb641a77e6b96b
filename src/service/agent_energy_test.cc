// The node agent's live J/token and its energy saver (issue 51), on simulated GPUs and a fake
// clock; the J/token case scrapes a local engine over HTTP.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "catalog/testing/embedded_catalogs.h"
#include "gpu/sim/sim_device.h"
#include "service/agent.h"
#include "service/agent_daemon.h"
#include "service/testing/fake_engine.h"
#include "service/testing/sim_agent_gpus.h"

namespace headroom::service {
namespace {

using std::chrono::seconds;

constexpr double kInf = std::numeric_limits<double>::infinity();

// An engine's counters and latency histograms, as the test drives them.
struct EngineCounters {
  double prompt = 0;
  double generated = 0;
  LatencyHistogramSample itl{{{0.01, 0}, {0.025, 0}, {0.05, 0}, {0.1, 0}, {kInf, 0}}};
  LatencyHistogramSample ttft{{{0.1, 0}, {0.5, 0}, {1, 0}, {2.5, 0}, {5, 0}, {kInf, 0}}};

  // n observations of `value` in a histogram (cumulative: every bucket at or above it).
  static void Observe(LatencyHistogramSample& h, double value, double n) {
    for (auto& [le, count] : h.buckets) {
      if (value <= le) count += n;
    }
  }
  // A window's traffic: tokens, and latencies all near the given ones.
  void Serve(double prompt_tokens, double generated_tokens, double itl_s, double ttft_s) {
    prompt += prompt_tokens;
    generated += generated_tokens;
    Observe(itl, itl_s, 100);
    Observe(ttft, ttft_s, 10);
  }
  EngineSample Sample() const {
    return EngineSample{
        .prompt_tokens = prompt, .generation_tokens = generated, .ttft = ttft, .itl = itl};
  }
  static std::string Histogram(const std::string& name, const LatencyHistogramSample& h) {
    std::string out = fmt::format("# TYPE {} histogram\n", name);
    for (const auto& [le, count] : h.buckets) {
      out += fmt::format("{}_bucket{{le=\"{}\",model_name=\"m\"}} {}\n", name,
                         std::isinf(le) ? std::string("+Inf") : fmt::format("{}", le), count);
    }
    return out;
  }
  // vLLM's page of these counters.
  std::string Page() const {
    return fmt::format(
               "vllm:num_requests_running{{model_name=\"m\"}} 4\n"
               "vllm:num_requests_waiting{{model_name=\"m\"}} 0\n"
               "vllm:prompt_tokens_total{{model_name=\"m\"}} {:.6f}\n"
               "vllm:generation_tokens_total{{model_name=\"m\"}} {:.6f}\n",
               prompt, generated) +
           Histogram("vllm:inter_token_latency_seconds", itl) +
           Histogram("vllm:time_to_first_token_seconds", ttft);
  }
};

class AgentEnergyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("headroom-agent-energy-{}-{}",
                       ::testing::UnitTest::GetInstance()->current_test_info()->name(), ::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all);
    options_.state_file = (dir_ / "state.json").string();
    devices_ = gpu::sim::CreateSimDevices(catalog::testing::A100(), 4, &clock_, {});
  }
  void TearDown() override {
    if (agent_) (void)agent_->Shutdown();
    std::filesystem::remove_all(dir_);
  }
  void Start() {
    auto agent = Agent::Create(
        testing::SimAgentGpus(devices_, catalog::testing::A100(), core::Megahertz(1110)), options_,
        &clock_);
    ASSERT_TRUE(agent) << agent.error().message();
    agent_ = std::move(*agent);
  }
  // Starts the agent with the energy saver, its SLOs ITL P50 50 ms and TTFT P99 2 s, and lifts the
  // failsafe the agent starts in (a controller's first PUT, capping nothing).
  void StartSaver() {
    options_.energy_saver =
        EnergySaverOptions{.itl_p50_slo_s = 0.05, .ttft_p99_slo_s = 2, .margin = 0.1};
    Start();
    ASSERT_TRUE(agent_->PutCaps(R"({"lease_s": 3600, "request_id": "start"})"));
  }
  double EnergyJ() {
    double j = 0;
    for (const auto& d : devices_) j += d->EnergyCounter()->value();
    return j;
  }
  // One engine window of 10 s, then the agent's tick.
  void Window(double itl_s, double ttft_s = 0.3) {
    clock_.Advance(seconds(10));
    engine_.Serve(500, 2000, itl_s, ttft_s);
    agent_->RecordEngineScrape(engine_.Sample());
    agent_->Tick();
  }
  // The top of GPU 0's clock lock (nullopt: unlocked, as the sim GPUs start).
  std::optional<double> LockTop(int i = 0) {
    auto lock = *devices_[i]->SmClockLock();
    return lock ? std::optional<double>(lock->max.value()) : std::nullopt;
  }
  nlohmann::ordered_json Saver() { return agent_->State()["energy_saver"]; }
  std::vector<double> Clocks() { return Saver()["clocks_mhz"].get<std::vector<double>>(); }

  std::filesystem::path dir_;
  core::FakeClock clock_;
  AgentOptions options_;
  std::vector<std::unique_ptr<gpu::Device>> devices_;
  std::unique_ptr<Agent> agent_;
  EngineCounters engine_;
};

// Issue 51: the J/token the agent exports, from a local engine over HTTP whose token counters
// follow known costs of the simulated GPUs' own energy, is the truth within its error; a window
// across a failed scrape is dropped.
TEST_F(AgentEnergyTest, ExportsJoulesPerTokenWithinItsErrorFromALocalEngine) {
  // A load whose power changes within the windows, so that their energies differ (at a constant
  // power no mix of tokens could tell idle power from the tokens' costs).
  auto load = gpu::sim::LoadScript::Parse("prefill:7s,decode*0.6:11s,idle:3s");
  ASSERT_TRUE(load) << load.error().message();
  for (const auto& d : devices_) dynamic_cast<gpu::sim::SimDevice&>(*d).SetScript(*load);
  Start();
  testing::FakeEngine server;
  EngineScraper scraper(server.url(), {}, seconds(2));
  // The truth; idle power the GPUs' rated one, which the agent takes when no window is free of
  // tokens (telemetry::TokenEnergyFit).
  constexpr double kPromptJ = 0.25, kGeneratedJ = 1.5;
  const double kIdleW = 4 * catalog::testing::A100().idle_power.value();
  constexpr double kSeconds = 5;
  double last_j = EnergyJ();
  int windows = 0;
  for (int k = 0; k < 30; ++k) {
    if (k == 12) {  // the engine down for one scrape: the windows either side of it dropped
      server.Serve("", 503);
      agent_->RecordEngineScrape(scraper.Scrape());
    }
    clock_.Advance(seconds(static_cast<int>(kSeconds)));
    const double now_j = EnergyJ();
    // What the tokens cost beyond idle, split between prompt and generated tokens in a mix
    // that changes from window to window.
    const double busy_j = now_j - last_j - kIdleW * kSeconds;
    ASSERT_GT(busy_j, 0) << "the simulated GPUs draw more than their rated idle power";
    const double prompt_share = 0.15 + 0.7 * ((k * 7) % 10) / 10.0;
    if (k > 0) {
      engine_.Serve(prompt_share * busy_j / kPromptJ, (1 - prompt_share) * busy_j / kGeneratedJ,
                    0.02, 0.3);
    }
    last_j = now_j;
    server.Serve(engine_.Page());
    agent_->RecordEngineScrape(scraper.Scrape());
    if (k > 0 && k != 12) ++windows;  // none across the failed scrape
  }
  const nlohmann::ordered_json state = agent_->State();
  ASSERT_FALSE(state["token_energy"].is_null()) << state.dump(2);
  const nlohmann::ordered_json& fit = state["token_energy"];
  EXPECT_EQ(fit["windows"].get<int>(), windows);
  EXPECT_EQ(fit["idle_from"], "rated");
  EXPECT_DOUBLE_EQ(fit["idle_w"].get<double>(), kIdleW);
  for (const auto& [key, truth] :
       {std::pair{"j_per_prompt_token", kPromptJ}, {"j_per_generated_token", kGeneratedJ}}) {
    const double got = fit[key].get<double>();
    const double se = fit[std::string(key) + "_stderr"].get<double>();
    // The energy counter moves in whole mJ: an error of a few mJ a window at most.
    EXPECT_NEAR(got, truth, 3 * se + 1e-3 * truth) << key << ": " << fit.dump();
    EXPECT_LT(se, 0.02 * truth) << key << ": the windows tell the terms apart: " << fit.dump();
  }
  const std::string metrics = agent_->Metrics();
  for (const char* family :
       {"headroom_agent_joules_per_prompt_token ", "headroom_agent_joules_per_prompt_token_stderr ",
        "headroom_agent_joules_per_generated_token ", "headroom_agent_idle_watts ",
        "headroom_agent_token_energy_windows ", "headroom_engine_itl_p50_seconds ",
        "headroom_agent_joules_per_generated_token_all_in "}) {
    EXPECT_NE(metrics.find(family), std::string::npos) << family << "\n" << metrics;
  }
  EXPECT_NE(metrics.find("headroom_agent_token_energy_split 1"), std::string::npos) << metrics;
}

TEST_F(AgentEnergyTest, NoFitSaysWhy) {
  Start();
  EXPECT_TRUE(agent_->State()["token_energy"].is_null());
  EXPECT_FALSE(agent_->State().contains("token_energy_why")) << "no engine: nothing to say";
  agent_->RecordEngineScrape(engine_.Sample());
  Window(0.02);
  EXPECT_EQ(agent_->State()["token_energy_why"], "fewer than 5 windows");
  EXPECT_EQ(agent_->Metrics().find("headroom_agent_joules_per_prompt_token"), std::string::npos);
}

// An engine held at one load (every window the same mix): prompt and generated tokens cannot be
// told apart, and the agent gives the whole cost per generated token, marked unsplit, with why;
// no prompt-token gauge.
TEST_F(AgentEnergyTest, AnEngineAtOneLoadIsGivenItsWholeCostUnsplit) {
  Start();
  agent_->RecordEngineScrape(engine_.Sample());
  for (int k = 0; k < 8; ++k) Window(0.02);
  const nlohmann::ordered_json state = agent_->State();
  const nlohmann::ordered_json& fit = state["token_energy"];
  ASSERT_FALSE(fit.is_null()) << state.dump();
  EXPECT_EQ(fit["split"], false);
  EXPECT_TRUE(fit["j_per_prompt_token"].is_null());
  EXPECT_EQ(fit["windows"], 8);
  EXPECT_TRUE(std::isfinite(fit["j_per_generated_token"].get<double>()));
  EXPECT_NE(state["token_energy_why"].get<std::string>().find("do not tell"), std::string::npos)
      << state.dump();
  const std::string metrics = agent_->Metrics();
  EXPECT_NE(metrics.find("headroom_agent_token_energy_split 0"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("headroom_agent_joules_per_generated_token "), std::string::npos);
  EXPECT_EQ(metrics.find("headroom_agent_joules_per_prompt_token"), std::string::npos) << metrics;
}

// Issue 51: lower on slack, one clock at a time and no faster than the settle time; the highest
// clock at once on a breach.
TEST_F(AgentEnergyTest, SaverLowersOnSlackAndRaisesAtOnceOnABreach) {
  StartSaver();
  const std::vector<double> clocks = Clocks();
  ASSERT_GE(clocks.size(), 5u);
  EXPECT_EQ(clocks.front(), 1410);
  EXPECT_FALSE(LockTop()) << "the highest clock holds no lock";
  agent_->RecordEngineScrape(engine_.Sample());
  Window(0.02);  // ITL P50 17.5 ms, TTFT P99 0.5 s: slack
  EXPECT_EQ(LockTop(), clocks[1]);
  EXPECT_EQ(LockTop(3), clocks[1]) << "every GPU of the server";
  Window(0.02);
  Window(0.02);
  EXPECT_EQ(LockTop(), clocks[1]) << "settling";
  Window(0.02);  // 30 s after the change
  EXPECT_EQ(LockTop(), clocks[2]);
  const nlohmann::ordered_json saver = Saver();
  EXPECT_EQ(saver["clock_mhz"].get<double>(), clocks[2]);
  EXPECT_EQ(saver["applied_mhz"].get<double>(), clocks[2]);
  EXPECT_FALSE(saver["row_cap_wins"].get<bool>());
  EXPECT_NEAR(saver["latency"]["itl_p50_s"].get<double>(), 0.0175, 1e-9);
  EXPECT_NE(agent_->Metrics().find(
                fmt::format("headroom_agent_energy_saver_clock_hertz {}", clocks[2] * 1e6)),
            std::string::npos)
      << agent_->Metrics();

  Window(0.08);  // ITL P50 75 ms > 50 ms
  EXPECT_FALSE(LockTop()) << "the highest clock at once";
  EXPECT_NE(Saver()["reason"].get<std::string>().find("ITL P50 75.0 ms above its SLO"),
            std::string::npos)
      << Saver().dump();
  EXPECT_NE(agent_->Metrics().find("headroom_agent_energy_saver_reason{reason=\"breach\"} 1"),
            std::string::npos);
  Window(0.02, 3.0);  // TTFT P99 above 2 s
  EXPECT_FALSE(LockTop());
}

// Issue 51: a stale, failed, reset or missing signal sends the clock back to the highest; it is
// never lowered on one.
TEST_F(AgentEnergyTest, SaverGoesToTheHighestClockOnAStaleOrBadSignal) {
  StartSaver();
  const std::vector<double> clocks = Clocks();
  agent_->RecordEngineScrape(engine_.Sample());
  Window(0.02);
  ASSERT_EQ(LockTop(), clocks[1]);
  clock_.Advance(seconds(31));  // no scrape: the window is 41 s old
  agent_->Tick();
  EXPECT_FALSE(LockTop());
  EXPECT_NE(Saver()["reason"].get<std::string>().find("stale"), std::string::npos);

  Window(0.02);
  Window(0.02);
  Window(0.02);
  ASSERT_EQ(LockTop(), clocks[1]);
  agent_->RecordEngineScrape(core::Fail(core::Error::Unavailable("engine metrics: down")));
  agent_->Tick();
  EXPECT_FALSE(LockTop());
  EXPECT_NE(Saver()["reason"].get<std::string>().find("down"), std::string::npos);
  EXPECT_NE(agent_->Metrics().find("headroom_agent_energy_saver_reason{reason=\"no_signal\"} 1"),
            std::string::npos);

  // The engine restarted (its counters went down): no window, not a lower clock.
  EngineCounters restarted;
  restarted.Serve(10, 10, 0.02, 0.3);
  agent_->RecordEngineScrape(engine_.Sample());
  agent_->Tick();
  EXPECT_FALSE(LockTop()) << "one good scrape is no window";
  clock_.Advance(seconds(10));
  agent_->RecordEngineScrape(restarted.Sample());
  agent_->Tick();
  EXPECT_FALSE(LockTop());
  EXPECT_NE(Saver()["latency"]["invalid"].get<std::string>().find("went down"), std::string::npos)
      << Saver().dump();
}

// Issue 51: the row's cap always wins: a PUT /v1/caps below the saver's clock is what the GPUs
// hold, one above it leaves the saver's.
TEST_F(AgentEnergyTest, TheRowsCapWinsOverTheSaver) {
  StartSaver();
  const std::vector<double> clocks = Clocks();
  agent_->RecordEngineScrape(engine_.Sample());
  Window(0.02);
  ASSERT_EQ(LockTop(), clocks[1]);
  ASSERT_TRUE(agent_->PutCaps(R"({"sm_clock_mhz": 1200, "lease_s": 3600, "request_id": "c1"})"));
  EXPECT_EQ(LockTop(), 1200);
  agent_->Tick();
  nlohmann::ordered_json saver = Saver();
  EXPECT_TRUE(saver["row_cap_wins"].get<bool>());
  EXPECT_EQ(saver["applied_mhz"].get<double>(), 1200);
  EXPECT_EQ(saver["clock_mhz"].get<double>(), clocks[1]);
  EXPECT_NE(agent_->Metrics().find("headroom_agent_energy_saver_row_cap_wins 1"),
            std::string::npos);

  ASSERT_TRUE(agent_->PutCaps(R"({"sm_clock_mhz": 1395, "lease_s": 3600, "request_id": "c2"})"));
  EXPECT_EQ(LockTop(), clocks[1]) << "the saver's clock is the lower now";
  EXPECT_FALSE(Saver()["row_cap_wins"].get<bool>());
  // The failsafe is a row cap too.
  clock_.Advance(seconds(3601));
  agent_->Tick();
  EXPECT_EQ(LockTop(), 1110);
}

// Issue 51: with the prefill boost, a waiting prompt lifts the saver's clock from every GPU until
// the last waiting prompt's first token leaves; the row's cap still wins while it is lifted; a
// first token with no prompt waiting changes nothing; the first token's latency is not the
// saver's to answer for.
TEST_F(AgentEnergyTest, APromptLiftsTheSaversClockUntilItsFirstTokenLeaves) {
  options_.energy_saver =
      EnergySaverOptions{.itl_p50_slo_s = 0.05, .ttft_p99_slo_s = 2, .prefill_boost = true};
  Start();
  ASSERT_TRUE(agent_->PutCaps(R"({"lease_s": 3600, "request_id": "start"})"));
  const std::vector<double> clocks = Clocks();
  agent_->PromptArrived();  // at the highest clock: nothing to lift
  agent_->FirstTokenLeft();
  agent_->RecordEngineScrape(engine_.Sample());
  Window(0.02, 3.0);  // TTFT P99 above its 2 s: not the saver's while it boosts
  ASSERT_EQ(LockTop(), clocks[1]);
  EXPECT_TRUE(Saver()["ttft_p99_slo_s"].is_null()) << Saver().dump();

  agent_->PromptArrived();
  EXPECT_FALSE(LockTop()) << "the highest clock while a prompt waits";
  EXPECT_FALSE(LockTop(3)) << "on every GPU";
  agent_->PromptArrived();
  clock_.Advance(seconds(2));
  agent_->FirstTokenLeft();
  EXPECT_FALSE(LockTop()) << "one prompt still waits";
  EXPECT_NE(agent_->Metrics().find("headroom_agent_prompts_waiting 1"), std::string::npos);
  agent_->FirstTokenLeft();
  EXPECT_EQ(LockTop(), clocks[1]) << "decode at the saver's clock again";
  agent_->FirstTokenLeft();  // unbalanced: ignored
  EXPECT_EQ(LockTop(), clocks[1]);
  const nlohmann::ordered_json boost = Saver()["prefill_boost"];
  EXPECT_EQ(boost["boosts"].get<int>(), 1) << boost.dump();
  EXPECT_EQ(boost["prompts_waiting"].get<int>(), 0);
  EXPECT_DOUBLE_EQ(boost["boosted_s"].get<double>(), 2.0);
  EXPECT_NE(agent_->Metrics().find("headroom_agent_energy_saver_boosted_seconds_total 2"),
            std::string::npos)
      << agent_->Metrics();

  ASSERT_TRUE(agent_->PutCaps(R"({"sm_clock_mhz": 1200, "lease_s": 3600, "request_id": "c1"})"));
  agent_->PromptArrived();
  EXPECT_EQ(LockTop(), 1200) << "the row's cap wins over the boost";
  agent_->FirstTokenLeft();
  EXPECT_EQ(LockTop(), std::min(1200.0, clocks[1]));
}

// Issue 51: the saver's clock is restored like every other setting: at Shutdown, and by DELETE
// /v1/caps, which then holds the GPUs as found until the next PUT.
TEST_F(AgentEnergyTest, TheSaversClockIsRestoredAtShutdownAndByDelete) {
  StartSaver();
  const std::vector<double> clocks = Clocks();
  agent_->RecordEngineScrape(engine_.Sample());
  Window(0.02);
  ASSERT_EQ(LockTop(), clocks[1]);
  ASSERT_TRUE(agent_->DeleteCaps());
  EXPECT_FALSE(LockTop());
  for (int k = 0; k < 4; ++k) Window(0.02);
  EXPECT_FALSE(LockTop()) << "paused until a PUT";
  EXPECT_EQ(Saver()["reason"], "paused by DELETE /v1/caps until the next PUT");
  ASSERT_TRUE(agent_->PutCaps(R"({"lease_s": 3600, "request_id": "again"})"));
  Window(0.02);
  ASSERT_EQ(LockTop(), clocks[1]);

  auto lines = agent_->Shutdown();
  ASSERT_TRUE(lines) << lines.error().message();
  EXPECT_FALSE(LockTop());
  Window(0.02);
  EXPECT_FALSE(LockTop()) << "nothing applied after the stop";
  EXPECT_FALSE(std::filesystem::exists(options_.state_file));
  agent_.reset();
}

// Issue 51: a crash while the saver holds a lower clock: the next start restores the originals.
TEST_F(AgentEnergyTest, AfterACrashTheNextStartRestoresTheOriginalClocks) {
  StartSaver();
  const std::vector<double> clocks = Clocks();
  agent_->RecordEngineScrape(engine_.Sample());
  Window(0.02);
  ASSERT_EQ(LockTop(), clocks[1]);
  agent_.reset();  // the crash: no Shutdown (the Agent's destructor restores nothing)
  ASSERT_TRUE(std::filesystem::exists(options_.state_file));
  options_.energy_saver.reset();
  Start();
  ASSERT_TRUE(agent_->PutCaps(R"({"lease_s": 3600, "request_id": "after"})"));
  EXPECT_FALSE(LockTop());
}

TEST(AgentSettingsEnergySaverTest, FlagsAreChecked) {
  const std::string dir =
      std::filesystem::temp_directory_path() / fmt::format("headroom-saver-flags-{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::string token = dir + "/token";
  { std::ofstream(token) << "secret\n"; }
  AgentSettingsText text;
  text.token_file = token;
  text.energy_saver_itl_p50 = "40ms";
  text.energy_saver_ttft_p99 = "2s";
  auto no_engine = ResolveAgentSettings(text, "sim");
  ASSERT_FALSE(no_engine);
  EXPECT_NE(no_engine.error().message().find("need --engine-metrics"), std::string::npos);
  text.engine_metrics = "http://127.0.0.1:8000/metrics";
  auto ok = ResolveAgentSettings(text, "sim");
  ASSERT_TRUE(ok) << ok.error().message();
  ASSERT_TRUE(ok->agent.energy_saver);
  EXPECT_DOUBLE_EQ(ok->agent.energy_saver->itl_p50_slo_s, 0.04);
  EXPECT_DOUBLE_EQ(ok->agent.energy_saver->floor_share, 0.5);
  for (const auto& [what, change] :
       std::vector<std::pair<std::string, std::function<void(AgentSettingsText&)>>>{
           {"--energy-saver-ttft-p99", [](auto& t) { t.energy_saver_ttft_p99 = ""; }},
           {"--energy-saver-itl-p50", [](auto& t) { t.energy_saver_itl_p50 = "0s"; }},
           {"--energy-saver-margin", [](auto& t) { t.energy_saver_margin = 1; }},
           {"--energy-saver-floor-percent", [](auto& t) { t.energy_saver_floor_percent = 0; }},
           {"--energy-saver-settle", [](auto& t) { t.energy_saver_settle = "soon"; }},
           {"--engine-itl-metric", [](auto& t) { t.engine_itl_metric = "a b"; }},
           {"--engine-iterations-metric", [](auto& t) { t.engine_iterations_metric = "x{y}"; }}}) {
    AgentSettingsText bad = text;
    change(bad);
    auto got = ResolveAgentSettings(bad, "sim");
    ASSERT_FALSE(got) << what;
    EXPECT_NE(got.error().message().find(what), std::string::npos) << got.error().message();
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace headroom::service
