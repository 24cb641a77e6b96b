#include "policy/policy_params.h"

#include <set>

#include <gtest/gtest.h>

namespace headroom::policy {
namespace {

using std::chrono::seconds;

model::GpuSpec Gpu(std::string name, double min_mhz, double max_mhz, double tdp_w,
                   double limit_min_w, double limit_max_w) {
  model::GpuSpec gpu;
  gpu.name = std::move(name);
  gpu.sm_clock_min = core::Megahertz(min_mhz);
  gpu.sm_clock_max = core::Megahertz(max_mhz);
  gpu.sm_clock_step = core::Megahertz(15);
  gpu.tdp = core::Watts(tdp_w);
  gpu.power_limit_min = core::Watts(limit_min_w);
  gpu.power_limit_max = core::Watts(limit_max_w);
  return gpu;
}

// Values from data/hardware/*.yaml.
model::GpuSpec A100() { return Gpu("a100-80gb-sxm", 210, 1410, 400, 100, 400); }
model::GpuSpec H100() { return Gpu("h100-80gb-sxm", 345, 1980, 700, 200, 700); }
model::GpuSpec H100Pcie() { return Gpu("h100-80gb-pcie", 345, 1755, 350, 200, 350); }

TEST(PolicyParamsTest, DefaultsAreTheBriefsA100Values) {
  const PolicyParams p;
  EXPECT_EQ(p.t1, 0.80);
  EXPECT_EQ(p.t2, 0.89);
  EXPECT_EQ(p.hysteresis, 0.05);
  EXPECT_EQ(p.brake_threshold, 1.0);
  EXPECT_EQ(p.lp_t1_clock, core::Megahertz(1275));
  EXPECT_EQ(p.lp_t2_clock, core::Megahertz(1110));
  EXPECT_EQ(p.hp_t2_clock, core::Megahertz(1305));
  EXPECT_EQ(p.hp_escalation_delay, seconds(40));
  EXPECT_TRUE(ValidateParams(p).has_value());
  EXPECT_TRUE(ValidateParams(p, A100()).has_value());
}

TEST(PolicyParamsTest, A100DerivationReproducesTheDefaults) {
  EXPECT_EQ(DefaultParamsFor(A100()), PolicyParams{});
}

TEST(PolicyParamsTest, H100ClocksScaleWithMaxClockOntoTheGrid) {
  const PolicyParams p = DefaultParamsFor(H100());
  // 1275 / 1410 * 1980 = 1790.4 -> 1785 on the 15 MHz grid down from 1980.
  EXPECT_EQ(p.lp_t1_clock, core::Megahertz(1785));
  EXPECT_EQ(p.lp_t2_clock, core::Megahertz(1560));  // 1558.7
  EXPECT_EQ(p.hp_t2_clock, core::Megahertz(1830));  // 1832.6
  EXPECT_EQ(p.ladder_lp1_clock, core::Megahertz(1785));
  EXPECT_EQ(p.ladder_lp3_clock, core::Megahertz(1350));  // 1348.1
  EXPECT_EQ(p.ladder_lp4_clock, core::Megahertz(1140));  // 1137.4
  EXPECT_EQ(p.power_cap_t1, core::Watts(630));           // 360 * 700 / 400
  EXPECT_EQ(p.power_cap_t2, core::Watts(543));           // 542.5
  EXPECT_EQ(p.t2, 0.89) << "fractions do not depend on the GPU";
  EXPECT_EQ(p.hp_escalation_delay, seconds(40));
  EXPECT_TRUE(ValidateParams(p, H100()).has_value());
}

TEST(PolicyParamsTest, H100PcieDerivationFitsItsRanges) {
  const PolicyParams p = DefaultParamsFor(H100Pcie());
  EXPECT_EQ(p.lp_t1_clock, core::Megahertz(1590));  // 1587.0
  EXPECT_EQ(p.power_cap_t1, core::Watts(315));
  EXPECT_EQ(p.power_cap_t2, core::Watts(271));
  EXPECT_TRUE(ValidateParams(p, H100Pcie()).has_value());
}

TEST(PolicyParamsTest, DerivationClampsToTheGpusRanges) {
  // A GPU whose lowest clock and lowest power limit sit above the scaled values.
  const model::GpuSpec gpu = Gpu("narrow", 1020, 1410, 400, 350, 400);
  const PolicyParams p = DefaultParamsFor(gpu);
  EXPECT_EQ(p.ladder_lp3_clock, core::Megahertz(1020));
  EXPECT_EQ(p.ladder_lp4_clock, core::Megahertz(1020));
  EXPECT_EQ(p.power_cap_t2, core::Watts(350));
  EXPECT_TRUE(ValidateParams(p, gpu).has_value());
}

struct BadField {
  std::string key;
  double value;
};

class ValidateParamsTest : public testing::TestWithParam<BadField> {};

TEST_P(ValidateParamsTest, NamesTheBadField) {
  PolicyParams params;
  ASSERT_TRUE(policy::SetParam(params, GetParam().key, GetParam().value).has_value());
  const core::Status status = ValidateParams(params);
  ASSERT_FALSE(status.has_value()) << GetParam().key << "=" << GetParam().value;
  EXPECT_EQ(status.error().code(), core::Code::kInvalidArgument);
  EXPECT_EQ(status.error().message().rfind(GetParam().key + ":", 0), 0u)
      << status.error().message();
}

INSTANTIATE_TEST_SUITE_P(
    Relations, ValidateParamsTest,
    testing::Values(BadField{"t1", 0}, BadField{"t2", 0.80}, BadField{"t2", 0.5},
                    BadField{"brake_threshold", 0.89}, BadField{"hysteresis", -0.01},
                    BadField{"hysteresis", 0.8}, BadField{"brake_release", 1.0},
                    BadField{"brake_release", 0}, BadField{"brake_hold_s", -1},
                    BadField{"brake_settle_s", -1}, BadField{"stale_after_s", 0},
                    BadField{"hp_escalation_delay_s", -1}, BadField{"lp_t1_clock_mhz", 0},
                    BadField{"lp_t2_clock_mhz", 1300}, BadField{"hp_t2_clock_mhz", -5},
                    BadField{"power_cap_t1_w", 0}, BadField{"power_cap_t2_w", 400},
                    BadField{"ladder_t1", 0}, BadField{"ladder_t2", 0.80},
                    BadField{"ladder_t3", 0.85}, BadField{"ladder_t4", 0.89},
                    BadField{"ladder_hp_threshold", 0.91}, BadField{"ladder_hp_threshold", 1.0},
                    BadField{"ladder_lp1_clock_mhz", 0}, BadField{"ladder_lp2_clock_mhz", 1300},
                    BadField{"ladder_lp3_clock_mhz", 1200}, BadField{"ladder_lp4_clock_mhz", 1000},
                    BadField{"ladder_predict_horizon_s", -1}, BadField{"ladder_trend_window_s", 0},
                    BadField{"mix_reserve_floor", -0.01}, BadField{"mix_reserve_floor", 1.0},
                    BadField{"mix_reserve_memory_s", 0}, BadField{"mix_burst_rise", 0},
                    BadField{"mix_burst_clock_mhz", 1200}));

TEST(PolicyParamsTest, ClocksAndLimitsOutsideTheGpuAreOutOfRange) {
  PolicyParams params;
  params.hp_t2_clock = core::Megahertz(1500);
  core::Status status = ValidateParams(params, A100());
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), core::Code::kOutOfRange);
  EXPECT_EQ(status.error().message(),
            "hp_t2_clock_mhz: 1500 MHz is outside a100-80gb-sxm's SM clock range [210, 1410] MHz");
  EXPECT_TRUE(ValidateParams(params).has_value()) << "without a GPU only relations are checked";

  params = PolicyParams{};
  params.power_cap_t1 = core::Watts(450);
  status = ValidateParams(params, A100());
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), core::Code::kOutOfRange);
  EXPECT_NE(status.error().message().find("power_cap_t1_w"), std::string::npos);

  // The A100 defaults do not fit a 350 W H100 PCIe (power_cap_t1_w = 360 W): derive them.
  status = ValidateParams(PolicyParams{}, H100Pcie());
  ASSERT_FALSE(status.has_value());
  EXPECT_NE(status.error().message().find("power_cap_t1_w"), std::string::npos);
}

TEST(PolicyParamsTest, EveryKeyRoundTripsInItsUnit) {
  const std::vector<std::string> names = ParamNames();
  EXPECT_EQ(names.size(), 36u);
  EXPECT_EQ(std::set<std::string>(names.begin(), names.end()).size(), names.size());
  for (const std::string& key : names) {
    PolicyParams params;
    const double before = *ParamValue(params, key);
    ASSERT_TRUE(SetParam(params, key, before + 0.5).has_value()) << key;
    EXPECT_DOUBLE_EQ(*ParamValue(params, key), before + 0.5) << key;
    EXPECT_NE(params, PolicyParams{}) << key << " changes no field";
  }
}

// brake_settle_s: 1e10 overflowed int64 ns (undefined behaviour; the controller never settled).
TEST(PolicyParamsTest, DurationsLongerThanADayAreErrors) {
  PolicyParams params;
  for (const char* key : {"brake_settle_s", "brake_hold_s", "stale_after_s"}) {
    auto r = SetParam(params, key, 1e10);
    ASSERT_FALSE(r) << key;
    EXPECT_NE(r.error().message().find(key), std::string::npos) << r.error().message();
  }
  EXPECT_EQ(params, PolicyParams{}) << "a refused value changes nothing";
  EXPECT_TRUE(SetParam(params, "brake_settle_s", 86'400));
}

TEST(PolicyParamsTest, KeysCarryTheirUnits) {
  PolicyParams params;
  ASSERT_TRUE(SetParam(params, "hp_escalation_delay_s", 12.5).has_value());
  EXPECT_EQ(params.hp_escalation_delay, std::chrono::milliseconds(12500));
  ASSERT_TRUE(SetParam(params, "lp_t2_clock_mhz", 1050).has_value());
  EXPECT_EQ(params.lp_t2_clock, core::Megahertz(1050));
  ASSERT_TRUE(SetParam(params, "power_cap_t2_w", 280).has_value());
  EXPECT_EQ(params.power_cap_t2, core::Watts(280));
  ASSERT_TRUE(SetParam(params, "t2", 0.9).has_value());
  EXPECT_EQ(params.t2, 0.9);
  EXPECT_EQ(*ParamValue(PolicyParams{}, "brake_hold_s"), 10.0);
}

TEST(PolicyParamsTest, UnknownKeyListsTheValidOnes) {
  PolicyParams params;
  const core::Status status = SetParam(params, "t3", 0.95);
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), core::Code::kNotFound);
  EXPECT_NE(status.error().message().find("'t3'"), std::string::npos);
  EXPECT_NE(status.error().message().find("hp_escalation_delay_s"), std::string::npos);
  EXPECT_FALSE(ParamValue(params, "t3").has_value());
}

TEST(PolicyParamsTest, NonFiniteValuesAreRejected) {
  PolicyParams params;
  const core::Status status = SetParam(params, "t1", std::numeric_limits<double>::quiet_NaN());
  ASSERT_FALSE(status.has_value());
  EXPECT_EQ(status.error().code(), core::Code::kInvalidArgument);
  EXPECT_EQ(params, PolicyParams{});
}

}  // namespace
}  // namespace headroom::policy
