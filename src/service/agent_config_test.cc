#include "service/agent_config.h"

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace headroom::service {
namespace {

TEST(AgentConfigTest, ReadsEveryDocumentedKey) {
  auto c = ParseAgentConfig(
      "backend: sim\nsim_gpu: a100\nsim_count: 4\nsim_load: decode\nsim_load_file: /tmp/l\n"
      "gpus: 0,1\nlisten: 127.0.0.1:9400\ntoken_file: /etc/t\nstate_file: /var/s\n"
      "priority: hp\nactuation_delay: 50ms\nsample_interval: 1s\nfailsafe_sm_clock_mhz: 1110\n"
      "tls_cert: /etc/c.pem\ntls_key: /etc/k.pem\nengine_proxy: 0.0.0.0:8001\n"
      "engine_url: http://127.0.0.1:8000\nengine_proxy_workers: 512\nengine_proxy_drain: 45s\n",
      "agent.yaml");
  ASSERT_TRUE(c) << c.error().message();
  EXPECT_EQ(c->backend, "sim");
  EXPECT_EQ(c->sim_count, 4);
  EXPECT_EQ(c->priority, "hp");
  EXPECT_EQ(c->failsafe_sm_clock_mhz, 1110);
  EXPECT_EQ(c->tls_cert, "/etc/c.pem");
  EXPECT_EQ(c->tls_key, "/etc/k.pem");
  EXPECT_EQ(c->engine_proxy, "0.0.0.0:8001");
  EXPECT_EQ(c->engine_url, "http://127.0.0.1:8000");
  EXPECT_EQ(c->engine_proxy_workers, 512);
  EXPECT_EQ(c->engine_proxy_drain, "45s");
  EXPECT_FALSE(ParseAgentConfig("listen: 127.0.0.1:1\n", "a.yaml")->backend.has_value());
  // One vocabulary with the controller's row.yaml: "high" and "low" are read too.
  EXPECT_EQ(ParseAgentConfig("priority: High\n", "a.yaml")->priority, "hp");
}

TEST(AgentConfigTest, BadValuesNameTheFileAndKey) {
  const std::pair<const char*, const char*> cases[] = {
      {"sim_count: 2.5\n", "sim_count"},
      {"sim_count: 0\n", "sim_count"},
      {"engine_proxy_workers: 0\n", "engine_proxy_workers"},
      {"engine_proxy_drain: -1s\n", "engine_proxy_drain"},
      {"engine_proxy_drain: soon\n", "engine_proxy_drain"},
      {"backend: cuda\n", "backend"},
      {"priority: medium\n", "priority"},
      {"actuation_delay: 10\n", "actuation_delay"},
      {"actuation_delay: -1s\n", "actuation_delay"},
      {"sample_interval: 0s\n", "sample_interval"},
      {"failsafe_sm_clock_mhz: .nan\n", "failsafe_sm_clock_mhz"},
      {"tokenfile: /etc/t\n", "tokenfile"},
      {"listen: a\nlisten: b\n", "listen"},
  };
  for (const auto& [text, key] : cases) {
    auto c = ParseAgentConfig(text, "agent.yaml");
    ASSERT_FALSE(c) << text;
    EXPECT_NE(c.error().message().find("agent.yaml"), std::string::npos) << c.error().message();
    EXPECT_NE(c.error().message().find(key), std::string::npos) << c.error().message();
  }
}

TEST(AgentConfigTest, ReadsThePowerSmoothingSection) {
  auto c = ParseAgentConfig(
      "power_smoothing:\n  profile: 2\n  floor_percent: 40\n  ramp_up_w_per_s: 500\n"
      "  ramp_down_w_per_s: 250.5\n  ramp_down_hysteresis_ms: 0\n",
      "agent.yaml");
  ASSERT_TRUE(c) << c.error().message();
  ASSERT_TRUE(c->power_smoothing.has_value());
  EXPECT_EQ(c->power_smoothing->profile, 2);
  EXPECT_EQ(c->power_smoothing->update.floor_percent, 40);
  EXPECT_EQ(c->power_smoothing->update.ramp_up_w_per_s, 500);
  EXPECT_EQ(c->power_smoothing->update.ramp_down_w_per_s, 250.5);
  EXPECT_EQ(c->power_smoothing->update.ramp_down_hysteresis_ms, 0);
  // The profile alone activates the preset as it is.
  auto only = ParseAgentConfig("power_smoothing:\n  profile: 0\n", "agent.yaml");
  ASSERT_TRUE(only) << only.error().message();
  EXPECT_TRUE(only->power_smoothing->update.empty());
  EXPECT_FALSE(ParseAgentConfig("listen: 127.0.0.1:1\n", "a.yaml")->power_smoothing);
}

TEST(AgentConfigTest, BadPowerSmoothingValuesNameTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {"power_smoothing:\n  floor_percent: 10\n", "profile"},
      {"power_smoothing:\n  profile: 5\n", "profile"},
      {"power_smoothing:\n  profile: -1\n", "profile"},
      {"power_smoothing:\n  profile: 1.5\n", "profile"},
      {"power_smoothing:\n  profile: 1\n  floor_percent: 101\n", "floor_percent"},
      {"power_smoothing:\n  profile: 1\n  floor_percent: -1\n", "floor_percent"},
      {"power_smoothing:\n  profile: 1\n  ramp_up_w_per_s: 0\n", "ramp_up_w_per_s"},
      {"power_smoothing:\n  profile: 1\n  ramp_down_w_per_s: .nan\n", "ramp_down_w_per_s"},
      {"power_smoothing:\n  profile: 1\n  ramp_down_hysteresis_ms: -5\n",
       "ramp_down_hysteresis_ms"},
      {"power_smoothing:\n  profile: 1\n  ramp_up: 5\n", "ramp_up"},
      {"power_smoothing: 2\n", "power_smoothing"},
  };
  for (const auto& [text, key] : cases) {
    auto c = ParseAgentConfig(text, "agent.yaml");
    ASSERT_FALSE(c) << text;
    EXPECT_NE(c.error().message().find("agent.yaml"), std::string::npos) << c.error().message();
    EXPECT_NE(c.error().message().find(key), std::string::npos) << c.error().message();
  }
}

}  // namespace
TEST(AgentConfigTest, ReadsTheEnergySaverSection) {
  auto c = ParseAgentConfig(
      "engine_metrics: http://127.0.0.1:8000/metrics\n"
      "engine_itl_metric: vllm:time_per_output_token_seconds\n"
      "engine_iterations_metric: engine:steps\n"
      "energy_saver:\n  itl_p50: 40ms\n  ttft_p99: 2s\n  margin: 0.2\n  settle: 1m\n"
      "  floor_percent: 60\n",
      "agent.yaml");
  ASSERT_TRUE(c) << c.error().message();
  ASSERT_TRUE(c->energy_saver);
  EXPECT_EQ(c->energy_saver->itl_p50, "40ms");
  EXPECT_EQ(c->energy_saver->ttft_p99, "2s");
  EXPECT_EQ(c->energy_saver->margin, 0.2);
  EXPECT_EQ(c->energy_saver->settle, "1m");
  EXPECT_EQ(c->energy_saver->floor_percent, 60);
  EXPECT_EQ(c->engine_itl_metric, "vllm:time_per_output_token_seconds");
  EXPECT_EQ(c->engine_iterations_metric, "engine:steps");
  for (const auto& [text, says] : std::vector<std::pair<std::string, std::string>>{
           {"energy_saver:\n  ttft_p99: 2s\n", "itl_p50"},
           {"energy_saver:\n  itl_p50: 0s\n  ttft_p99: 2s\n", "itl_p50"},
           {"energy_saver:\n  itl_p50: 40ms\n  ttft_p99: 2s\n  margin: 1\n", "margin"},
           {"energy_saver:\n  itl_p50: 40ms\n  ttft_p99: 2s\n  floor_percent: 0\n",
            "floor_percent"},
           {"energy_saver:\n  itl_p50: 40ms\n  ttft_p99: 2s\n  slo: 1\n", "slo"}}) {
    auto bad = ParseAgentConfig(text, "agent.yaml");
    ASSERT_FALSE(bad) << text;
    EXPECT_NE(bad.error().message().find("agent.yaml:"), std::string::npos)
        << bad.error().message();
    EXPECT_NE(bad.error().message().find(says), std::string::npos) << bad.error().message();
  }
}

}  // namespace headroom::service
