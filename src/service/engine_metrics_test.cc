#include "service/engine_metrics.h"

#include <filesystem>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "catalog/testing/embedded_catalogs.h"
#include "gpu/sim/sim_device.h"
#include "service/agent.h"
#include "service/agent_daemon.h"
#include "service/agent_link.h"
#include "service/testing/fake_engine.h"
#include "service/testing/sim_agent_gpus.h"

namespace headroom::service {
namespace {

using std::chrono::seconds;

// What a vLLM server's /metrics looks like (trimmed): two models, histograms, help lines.
std::string VllmPage(double prompt, double generated, double running, double waiting) {
  return fmt::format(
      R"(# HELP vllm:num_requests_running Number of requests currently running on GPU.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{{model_name="llama"}} {2}
vllm:num_requests_running{{model_name="other"}} 0.0
# HELP vllm:num_requests_waiting Number of requests waiting to be processed.
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{{model_name="llama"}} {3}
# TYPE vllm:prompt_tokens_total counter
vllm:prompt_tokens_total{{model_name="llama"}} {0}
# TYPE vllm:generation_tokens_total counter
vllm:generation_tokens_total{{model_name="llama"}} {1} 1700000000000
vllm:e2e_request_latency_seconds_bucket{{le="+Inf",model_name="llama, \"quoted\" {{}}"}} 12.0
vllm:cache_config_info{{block_size="16"}} NaN
)",
      prompt, generated, running, waiting);
}

TEST(EngineMetricsTest, ParsesVllmsPageSummingLabelSets) {
  auto sample = ParseEngineMetrics(VllmPage(3000, 1000, 5, 2), EngineMetricNames{});
  ASSERT_TRUE(sample) << sample.error().message();
  EXPECT_EQ(sample->prompt_tokens, 3000);
  EXPECT_EQ(sample->generation_tokens, 1000);
  EXPECT_EQ(sample->running, 5);
  EXPECT_EQ(sample->waiting, 2);
}

TEST(EngineMetricsTest, OtherEnginesByName) {
  const EngineMetricNames tgi{.prompt_tokens = "tgi_prompt_tokens",
                              .generation_tokens = "tgi_generated_tokens",
                              .running = "tgi_batch_current_size",
                              .waiting = "tgi_queue_size"};
  auto sample = ParseEngineMetrics(
      "tgi_prompt_tokens 10\ntgi_generated_tokens 30\ntgi_batch_current_size 4\ntgi_queue_size 0\n",
      tgi);
  ASSERT_TRUE(sample) << sample.error().message();
  EXPECT_EQ(sample->prompt_tokens, 10);
  EXPECT_EQ(sample->waiting, 0);
}

TEST(EngineMetricsTest, MalformedPagesAreErrorsNamingWhat) {
  const EngineMetricNames names;
  struct Case {
    std::string page;
    std::string error;
  };
  for (const Case& c : {
           Case{"<html>502 Bad Gateway</html>", "line 1"},
           Case{VllmPage(1, 1, 1, 1) + "vllm:num_requests_waiting{model_name=\"x\" 3\n",
                "do not close"},
           Case{VllmPage(1, 1, 1, 1) + "vllm:prompt_tokens_total{a=\"b\"} lots\n", "no number"},
           Case{VllmPage(1, 1, 1, 1) + "vllm:num_requests_waiting{a=\"b\"} -1\n", "not negative"},
           Case{VllmPage(1, 1, 1, 1) + "vllm:prompt_tokens_total{a=\"b\"} +Inf\n", "finite"},
           Case{"vllm:prompt_tokens_total 1\n", "no 'vllm:generation_tokens_total'"},
           Case{"", "no 'vllm:prompt_tokens_total'"},
       }) {
    auto sample = ParseEngineMetrics(c.page, names);
    ASSERT_FALSE(sample) << c.page.substr(0, 60);
    EXPECT_NE(sample.error().message().find(c.error), std::string::npos)
        << sample.error().message();
  }
}

TEST(EngineMetricsTest, TheWindowIsTheDifferenceOfTwoScrapes) {
  EngineWindow window;
  const core::TimePoint t0{};
  window.Add({.prompt_tokens = 1000, .generation_tokens = 500}, t0);
  EXPECT_FALSE(window.Signal(t0)) << "one scrape is no window";
  window.Add({.prompt_tokens = 4000, .generation_tokens = 1500, .running = 7, .waiting = 3},
             t0 + seconds(10));
  auto signal = window.Signal(t0 + seconds(12));
  ASSERT_TRUE(signal);
  EXPECT_DOUBLE_EQ(signal->prefill_share, 0.75);  // 3000 of 4000 tokens
  EXPECT_EQ(signal->running, 7);
  EXPECT_EQ(signal->waiting, 3);
  EXPECT_EQ(signal->age, seconds(2));
  // The engine restarted: its counters went down. No window until it has two scrapes again.
  window.Add({.prompt_tokens = 10, .generation_tokens = 10}, t0 + seconds(20));
  EXPECT_FALSE(window.Signal(t0 + seconds(20)));
  EXPECT_NE(window.error().find("restarted"), std::string::npos);
  window.Add({.prompt_tokens = 10, .generation_tokens = 30}, t0 + seconds(30));
  ASSERT_TRUE(window.Signal(t0 + seconds(30)));
  EXPECT_DOUBLE_EQ(window.Signal(t0 + seconds(30))->prefill_share, 0.0);
  // A failed scrape drops the window at once.
  window.Fail("down");
  EXPECT_FALSE(window.Signal(t0 + seconds(31)));
  EXPECT_EQ(window.failures(), 1u);
}

TEST(EngineMetricsTest, UrlsAreChecked) {
  EXPECT_TRUE(CheckEngineMetricsUrl("http://127.0.0.1:8000/metrics"));
  EXPECT_TRUE(CheckEngineMetricsUrl("https://vllm.internal/metrics"));
  for (const char* bad : {"127.0.0.1:8000/metrics", "http://127.0.0.1:8000", "ftp://x/metrics",
                          "http:///metrics", ""}) {
    EXPECT_FALSE(CheckEngineMetricsUrl(bad)) << bad;
  }
}

using testing::FakeEngine;

class AgentEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           fmt::format("headroom-engine-{}-{}",
                       ::testing::UnitTest::GetInstance()->current_test_info()->name(), ::getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    AgentOptions options;
    options.state_file = (dir_ / "state.json").string();
    devices_ = gpu::sim::CreateSimDevices(catalog::testing::A100(), 2, &clock_, {});
    auto agent = Agent::Create(
        testing::SimAgentGpus(devices_, catalog::testing::A100(), core::Megahertz(1110)), options,
        &clock_);
    ASSERT_TRUE(agent) << agent.error().message();
    agent_ = std::move(*agent);
  }
  void TearDown() override {
    if (agent_) (void)agent_->Shutdown();
    std::filesystem::remove_all(dir_);
  }
  // What the controller makes of the agent's /v1/state.
  AgentReport Report() {
    auto report = ParseAgentState(nlohmann::json::parse(agent_->State().dump()));
    EXPECT_TRUE(report) << report.error().message();
    return report ? *report : AgentReport{};
  }

  std::filesystem::path dir_;
  core::FakeClock clock_;
  std::vector<std::unique_ptr<gpu::Device>> devices_;
  std::unique_ptr<Agent> agent_;
};

TEST_F(AgentEngineTest, ReportsTheWindowInStateAndMetricsAndDropsItWhenTheEngineFails) {
  FakeEngine engine;
  EngineScraper scraper(engine.url(), {}, seconds(2));
  EXPECT_FALSE(agent_->State().contains("serving_error"));
  EXPECT_FALSE(Report().serving) << "no engine configured: no signal";

  engine.Serve(VllmPage(1000, 1000, 4, 0));
  agent_->RecordEngineScrape(scraper.Scrape());
  clock_.Advance(seconds(10));
  engine.Serve(VllmPage(1900, 1300, 6, 2));
  agent_->RecordEngineScrape(scraper.Scrape());
  clock_.Advance(seconds(1));
  AgentReport report = Report();
  ASSERT_TRUE(report.serving);
  EXPECT_DOUBLE_EQ(report.serving->prefill_share, 0.75);  // 900 of 1200 tokens
  EXPECT_EQ(report.serving->waiting, 2);
  EXPECT_EQ(report.serving->running, 6);
  EXPECT_EQ(report.serving->age, seconds(1));
  const std::string metrics = agent_->Metrics();
  EXPECT_NE(metrics.find("headroom_engine_prefill_share 0.75"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("headroom_engine_requests_waiting 2"), std::string::npos);
  EXPECT_NE(metrics.find("headroom_engine_scrape_failures_total 0"), std::string::npos);

  // Malformed: no signal (the policy falls back to the GPUs' power), the error reported.
  engine.Serve("<html>oops</html>");
  agent_->RecordEngineScrape(scraper.Scrape());
  EXPECT_FALSE(Report().serving);
  EXPECT_NE(agent_->State()["serving_error"].get<std::string>().find("line 1"), std::string::npos);
  // An error status, then nobody listening at all.
  engine.Serve(VllmPage(1, 1, 1, 1), 503);
  auto failed = scraper.Scrape();
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message().find("HTTP 503"), std::string::npos);
  EngineScraper nobody("http://127.0.0.1:1/metrics", {}, seconds(1));
  auto down = nobody.Scrape();
  ASSERT_FALSE(down);
  agent_->RecordEngineScrape(down);
  EXPECT_FALSE(Report().serving);
  EXPECT_NE(agent_->Metrics().find("headroom_engine_scrape_failures_total 2"), std::string::npos);
  // The GPUs' report itself is untouched by the engine's troubles.
  EXPECT_EQ(Report().gpu_count, 2);
}

TEST(AgentLinkServingTest, ABadServingSectionIsNoSignalNotABadReport) {
  const std::string gpus = R"("gpus": [{"power_w": 100, "caps": {}}])";
  for (const std::string& serving :
       {std::string(R"({"prefill_share": 1.5, "waiting": 0, "running": 1, "age_s": 1})"),
        std::string(R"({"prefill_share": 0.5, "waiting": -1, "running": 1, "age_s": 1})"),
        std::string(R"({"prefill_share": "half", "waiting": 0, "running": 1, "age_s": 1})"),
        std::string(R"({"prefill_share": 0.5, "waiting": 0, "running": 1})"),
        std::string(R"([1, 2])")}) {
    auto report =
        ParseAgentState(nlohmann::json::parse("{" + gpus + ", \"serving\": " + serving + "}"));
    ASSERT_TRUE(report) << serving;
    EXPECT_FALSE(report->serving) << serving;
    EXPECT_EQ(report->gpu_power, core::Watts(100));
  }
  auto good = ParseAgentState(nlohmann::json::parse(
      "{" + gpus +
      R"(, "serving": {"prefill_share": 0.25, "waiting": 3, "running": 9, "age_s": 4.5}})"));
  ASSERT_TRUE(good);
  ASSERT_TRUE(good->serving);
  EXPECT_EQ(good->serving->prefill_share, 0.25);
  EXPECT_EQ(good->serving->age, std::chrono::milliseconds(4500));
}

TEST(AgentSettingsEngineTest, FlagsAreChecked) {
  const std::filesystem::path token =
      std::filesystem::temp_directory_path() / fmt::format("headroom-engine-token-{}", ::getpid());
  { std::ofstream(token) << "0123456789abcdef0123456789abcdef\n"; }
  std::filesystem::permissions(
      token, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  AgentSettingsText text;
  text.token_file = token.string();
  auto none = ResolveAgentSettings(text, "sim");
  ASSERT_TRUE(none) << none.error().message();
  EXPECT_FALSE(none->engine);
  text.engine_metrics = "http://127.0.0.1:8000/metrics";
  auto some = ResolveAgentSettings(text, "sim");
  ASSERT_TRUE(some) << some.error().message();
  ASSERT_TRUE(some->engine);
  EXPECT_EQ(some->engine->interval, seconds(10));
  EXPECT_EQ(some->engine->names.waiting, "vllm:num_requests_waiting");
  for (auto bad : {std::pair<std::string, std::string>{"--engine-metrics", "localhost:8000"},
                   {"--engine-metrics-interval", "0s"},
                   {"--engine-waiting-metric", "has space"}}) {
    AgentSettingsText broken = text;
    if (bad.first == "--engine-metrics") broken.engine_metrics = bad.second;
    if (bad.first == "--engine-metrics-interval") broken.engine_metrics_interval = bad.second;
    if (bad.first == "--engine-waiting-metric") broken.engine_waiting_metric = bad.second;
    auto rejected = ResolveAgentSettings(broken, "sim");
    ASSERT_FALSE(rejected) << bad.first;
    EXPECT_NE(rejected.error().message().find(bad.first), std::string::npos)
        << rejected.error().message();
  }
  std::filesystem::remove(token);
}

// Issue 51: the engine's latency histograms, as vLLM writes them (one label set per model),
// summed per bucket; the window's quantile between two scrapes as histogram_quantile reads it.
constexpr const char* kTtftBefore =
    "# TYPE vllm:time_to_first_token_seconds histogram\n"
    "vllm:time_to_first_token_seconds_bucket{le=\"0.1\",model_name=\"a\"} 10.0\n"
    "vllm:time_to_first_token_seconds_bucket{le=\"0.5\",model_name=\"a\"} 20.0\n"
    "vllm:time_to_first_token_seconds_bucket{le=\"1.0\",model_name=\"a\"} 30.0\n"
    "vllm:time_to_first_token_seconds_bucket{le=\"+Inf\",model_name=\"a\"} 30.0\n"
    "vllm:time_to_first_token_seconds_bucket{model_name=\"b\",le=\"0.1\"} 0\n"
    "vllm:time_to_first_token_seconds_bucket{model_name=\"b\",le=\"0.5\"} 0\n"
    "vllm:time_to_first_token_seconds_bucket{model_name=\"b\",le=\"1.0\"} 0\n"
    "vllm:time_to_first_token_seconds_bucket{model_name=\"b\",le=\"+Inf\"} 0\n"
    "vllm:time_to_first_token_seconds_count{model_name=\"a\"} 30.0\n";

std::string Shifted(std::string text, const std::string& from, const std::string& to) {
  text.replace(text.find(from), from.size(), to);
  return text;
}

TEST(EngineLatencyTest, AHistogramIsSummedOverItsLabelSetsBucketByBucket) {
  auto h = ParseLatencyHistogram(kTtftBefore, "vllm:time_to_first_token_seconds");
  ASSERT_TRUE(h.has_value()) << h.error().message();
  ASSERT_TRUE(h->has_value());
  ASSERT_EQ((*h)->buckets.size(), 4u);
  EXPECT_DOUBLE_EQ((*h)->buckets[1].first, 0.5);
  EXPECT_DOUBLE_EQ((*h)->buckets[1].second, 20);
  EXPECT_DOUBLE_EQ((*h)->count(), 30);
  auto absent = ParseLatencyHistogram(kTtftBefore, "vllm:time_per_output_token_seconds");
  ASSERT_TRUE(absent.has_value());
  EXPECT_FALSE(absent->has_value());
  for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
           {Shifted(kTtftBefore, "le=\"0.5\",model_name=\"a\"} 20.0",
                    "le=\"0.5\",model_name=\"a\"} 5.0"),
            "fewer than the one below it"},
           {Shifted(kTtftBefore, "le=\"0.1\",model_name=\"a\"", "le=\"soon\",model_name=\"a\""),
            "line 2: vllm:time_to_first_token_seconds: a bucket without a numeric le"},
           {Shifted(kTtftBefore, "\"a\"} 30.0\nvllm:time_to_first_token_seconds_bucket{model",
                    "\"a\"} NaN\nvllm:time_to_first_token_seconds_bucket{model"),
            "not a finite count"}}) {
    auto rejected = ParseLatencyHistogram(text, "vllm:time_to_first_token_seconds");
    ASSERT_FALSE(rejected.has_value()) << says;
    EXPECT_NE(rejected.error().message().find(says), std::string::npos)
        << rejected.error().message();
  }
  const std::string no_inf =
      "x_bucket{le=\"0.1\"} 1\n"
      "x_bucket{le=\"0.5\"} 2\n";
  auto rejected = ParseLatencyHistogram(no_inf, "x");
  ASSERT_FALSE(rejected.has_value());
  EXPECT_NE(rejected.error().message().find("no le=\"+Inf\" bucket"), std::string::npos);
}

TEST(EngineLatencyTest, TheWindowsQuantileIsInterpolatedWithinItsBucket) {
  const auto parse = [](const std::string& text) {
    return **ParseLatencyHistogram(text, "vllm:time_to_first_token_seconds");
  };
  const LatencyHistogramSample before = parse(kTtftBefore);
  // 40 more observations: 0 below 0.1 s, 20 in (0.1, 0.5], 10 in (0.5, 1], 10 above 1 s.
  std::string later = kTtftBefore;
  later = Shifted(later, "le=\"0.5\",model_name=\"a\"} 20.0", "le=\"0.5\",model_name=\"a\"} 40.0");
  later = Shifted(later, "le=\"1.0\",model_name=\"a\"} 30.0", "le=\"1.0\",model_name=\"a\"} 60.0");
  later =
      Shifted(later, "le=\"+Inf\",model_name=\"a\"} 30.0", "le=\"+Inf\",model_name=\"a\"} 70.0");
  const LatencyHistogramSample after = parse(later);
  // The median: the 20th of 40, the last of the (0.1, 0.5] bucket's 20.
  auto p50 = WindowQuantile(before, after, 0.5);
  ASSERT_TRUE(p50.has_value()) << p50.error().message();
  EXPECT_NEAR(**p50, 0.5, 1e-12);
  // The 0.25 quantile: the 10th of 40, halfway through (0.1, 0.5].
  EXPECT_NEAR(**WindowQuantile(before, after, 0.25), 0.3, 1e-12);
  // The 0.625 quantile: the 25th, halfway through (0.5, 1].
  EXPECT_NEAR(**WindowQuantile(before, after, 0.625), 0.75, 1e-12);
  // P99 falls in +Inf: the highest finite bound, as histogram_quantile answers.
  EXPECT_DOUBLE_EQ(**WindowQuantile(before, after, 0.99), 1.0);
  // Nothing observed between two scrapes: no quantile.
  auto idle = WindowQuantile(after, after, 0.5);
  ASSERT_TRUE(idle.has_value());
  EXPECT_FALSE(idle->has_value());
  // A count that went down (the engine restarted): no window to trust.
  auto restarted = WindowQuantile(after, before, 0.5);
  ASSERT_FALSE(restarted.has_value());
  EXPECT_NE(restarted.error().message().find("went down"), std::string::npos);
}

}  // namespace
// Issue 51: the scrape carries the engine's latency histograms when its page has them, and the
// window between two scrapes their ITL P50 and TTFT P99; a failure or a reset marks it invalid.
TEST(EngineLatencyTest, TheScrapeCarriesTheHistogramsAndTheWindowTheirQuantiles) {
  const EngineMetricNames names;
  const std::string itl_before =
      "vllm:inter_token_latency_seconds_bucket{le=\"0.01\"} 0\n"
      "vllm:inter_token_latency_seconds_bucket{le=\"0.05\"} 10\n"
      "vllm:inter_token_latency_seconds_bucket{le=\"+Inf\"} 10\n";
  const std::string before = VllmPage(1000, 1000, 4, 0) + kTtftBefore + itl_before;
  auto plain = ParseEngineMetrics(VllmPage(1000, 1000, 4, 0), names);
  ASSERT_TRUE(plain) << plain.error().message();
  EXPECT_FALSE(plain->itl) << "an engine without histograms still serves the mix-aware policy";
  EXPECT_FALSE(plain->iterations);
  auto stepped = ParseEngineMetrics(VllmPage(1000, 1000, 4, 0) +
                                        "vllm:iteration_tokens_total_bucket{le=\"64\"} 700\n"
                                        "vllm:iteration_tokens_total_bucket{le=\"+Inf\"} 900\n",
                                    names);
  ASSERT_TRUE(stepped) << stepped.error().message();
  EXPECT_EQ(stepped->iterations, 900) << "the engine's steps: the histogram's count";
  auto first = ParseEngineMetrics(before, names);
  ASSERT_TRUE(first) << first.error().message();
  ASSERT_TRUE(first->itl && first->ttft);
  EXPECT_EQ(first->itl->count(), 10);
  auto malformed =
      ParseEngineMetrics(before + "vllm:inter_token_latency_seconds_bucket{le=\"x\"} 1\n", names);
  ASSERT_FALSE(malformed);
  EXPECT_NE(malformed.error().message().find("numeric le"), std::string::npos);

  // 20 more gaps, all in (0.01, 0.05]: the P50 is halfway through that bucket.
  std::string later = VllmPage(1500, 2000, 4, 0) + kTtftBefore;
  later +=
      "vllm:inter_token_latency_seconds_bucket{le=\"0.01\"} 0\n"
      "vllm:inter_token_latency_seconds_bucket{le=\"0.05\"} 30\n"
      "vllm:inter_token_latency_seconds_bucket{le=\"+Inf\"} 30\n";
  EngineWindow window;
  const core::TimePoint t0{seconds(100)};
  window.Add(*first, t0);
  EXPECT_FALSE(window.latency()) << "one scrape is no window";
  window.Add(*ParseEngineMetrics(later, names), t0 + seconds(10));
  ASSERT_TRUE(window.latency());
  EXPECT_TRUE(window.latency()->invalid.empty()) << window.latency()->invalid;
  EXPECT_EQ(window.latency()->at, seconds(110));
  EXPECT_NEAR(*window.latency()->itl_p50_s, 0.01 + 0.04 * 0.5, 1e-12);  // the 10th of 20
  EXPECT_FALSE(window.latency()->ttft_p99_s) << "no request started in the window";
  // The engine restarted: its counters went down.
  window.Add(*first, t0 + seconds(20));
  ASSERT_TRUE(window.latency());
  EXPECT_NE(window.latency()->invalid.find("went down"), std::string::npos);
  window.Fail("engine metrics: down");
  EXPECT_EQ(window.latency()->invalid, "engine metrics: down");
  // A page without the histograms: the saver is told why it has no latencies.
  EngineWindow bare;
  bare.Add(*plain, t0);
  bare.Add(*ParseEngineMetrics(VllmPage(2000, 2000, 4, 0), names), t0 + seconds(10));
  ASSERT_TRUE(bare.latency());
  EXPECT_NE(bare.latency()->invalid.find("no inter-token or first-token latency histogram"),
            std::string::npos);
}

}  // namespace headroom::service
