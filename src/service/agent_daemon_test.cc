#include "service/agent_daemon.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "gpu/sim/sim_device.h"
#include "policy/policy_params.h"

namespace headroom::service {
namespace {

class AgentGpusOfTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto catalog = catalog::HardwareCatalog::Embedded();
    ASSERT_TRUE(catalog) << catalog.error().message();
    catalog_ = std::make_unique<catalog::HardwareCatalog>(std::move(*catalog));
    spec_ = **catalog_->Gpu("a100-80gb-sxm");
    for (int i = 0; i < 2; ++i) {
      devices_.push_back(
          std::make_unique<gpu::sim::SimDevice>(i, spec_, &clock_, gpu::sim::SimOptions{}));
    }
  }
  core::FakeClock clock_;
  std::unique_ptr<catalog::HardwareCatalog> catalog_;
  model::GpuSpec spec_;
  std::vector<std::unique_ptr<gpu::Device>> devices_;
};

TEST_F(AgentGpusOfTest, EachDeviceGetsItsCatalogRangesAndTheLpT2ClockAsFailsafe) {
  auto gpus = AgentGpusOf(devices_, *catalog_, std::nullopt);
  ASSERT_TRUE(gpus) << gpus.error().message();
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_EQ((*gpus)[1].device, devices_[1].get());
  EXPECT_EQ((*gpus)[1].spec.name, spec_.name);
  EXPECT_EQ((*gpus)[0].failsafe_clock,
            spec_.SnapClock(policy::DefaultParamsFor(spec_).lp_t2_clock));
}

TEST_F(AgentGpusOfTest, AGivenFailsafeIsSnappedAndOneOutsideTheRangeIsRefused) {
  auto gpus = AgentGpusOf(devices_, *catalog_, 1203.0);
  ASSERT_TRUE(gpus) << gpus.error().message();
  EXPECT_EQ((*gpus)[0].failsafe_clock, spec_.SnapClock(core::Megahertz(1203)));
  auto bad = AgentGpusOf(devices_, *catalog_, 90.0);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), core::Code::kOutOfRange);
  EXPECT_NE(bad.error().message().find("--failsafe-sm-clock 90 MHz"), std::string::npos)
      << bad.error().message();
}

// The settings as given are checked one by one, each error naming its flag.
TEST(ResolveAgentSettingsTest, ReadsTheTokenAndParsesEverySetting) {
  const std::string token = ::testing::TempDir() + "/agent-token";
  { std::ofstream(token) << "s3cret-token-of-some-length\n"; }
  std::filesystem::permissions(
      token, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  AgentSettingsText text{.listen = "127.0.0.1:0",
                         .token_file = token,
                         .priority = "high",
                         .actuation_delay = "2s",
                         .sample_interval = "250ms"};
  auto settings = ResolveAgentSettings(text, "sim");
  ASSERT_TRUE(settings) << settings.error().message();
  EXPECT_EQ(settings->token, "s3cret-token-of-some-length");
  EXPECT_EQ(settings->listen.port, 0);
  EXPECT_EQ(settings->agent.priority, "hp");
  EXPECT_EQ(settings->agent.backend, "sim");
  EXPECT_EQ(settings->agent.actuation_delay, std::chrono::seconds(2));
  EXPECT_EQ(settings->agent.sample_interval, std::chrono::milliseconds(250));
  EXPECT_FALSE(settings->tls.has_value());

  const auto error = [&](AgentSettingsText t) {
    auto r = ResolveAgentSettings(t, "sim");
    return r ? std::string("ok") : r.error().message();
  };
  AgentSettingsText no_token = text;
  no_token.token_file.clear();
  EXPECT_EQ(error(no_token), "--token-file is required");
  AgentSettingsText bad_priority = text;
  bad_priority.priority = "urgent";
  EXPECT_EQ(error(bad_priority).rfind("--priority: ", 0), 0u) << error(bad_priority);
  AgentSettingsText bad_delay = text;
  bad_delay.actuation_delay = "soon";
  EXPECT_EQ(error(bad_delay).rfind("--actuation-delay: ", 0), 0u) << error(bad_delay);
  AgentSettingsText zero_interval = text;
  zero_interval.sample_interval = "0s";
  EXPECT_NE(error(zero_interval).find("--sample-interval > 0"), std::string::npos);
  AgentSettingsText half_tls = text;
  half_tls.tls_cert = "/etc/cert.pem";
  EXPECT_NE(error(half_tls), "ok");
}

}  // namespace
}  // namespace headroom::service
