#include "service/agent_daemon.h"

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

}  // namespace
}  // namespace headroom::service
