// Calibration of the GPU power model against the brief's published points (system.md §1, §5),
// and its monotonic shapes. A change to the model or the catalog that breaks a published
// calibration point fails here.
#include "model/gpu_power_model.h"

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"

namespace headroom::model {
namespace {

using core::Megahertz;
using core::Watts;

GpuPowerModel ModelOf(const char* gpu) {
  static const auto catalog = catalog::HardwareCatalog::Embedded();
  EXPECT_TRUE(catalog);
  return GpuPowerModel(**catalog->Gpu(gpu));
}

double Cut(Watts before, Watts after) { return 1.0 - after / before; }

TEST(GpuPowerModelCalibrationTest, A100PrefillAboutTdpDecodeAbout250IdleAbout63) {
  const GpuPowerModel m = ModelOf("a100-80gb-sxm");
  const Megahertz f_max(1410);
  EXPECT_NEAR(m.PhasePower(PrefillLikePhase(), f_max).value(), 400, 20);
  EXPECT_NEAR(m.PhasePower(DecodeLikePhase(), f_max).value(), 250, 15);
  EXPECT_NEAR(m.Power(Activity{}, f_max).value(), 63, 1);
}

TEST(GpuPowerModelCalibrationTest, A100ClockCapCutsComputePowerButNotDecodeSpeed) {
  const GpuPowerModel m = ModelOf("a100-80gb-sxm");
  const Watts prefill_max = m.PhasePower(PrefillLikePhase(), Megahertz(1410));
  const double decode_max_s = m.Time(DecodeLikePhase(), Megahertz(1410)).time_s;
  for (double f : {1110.0, 1155.0, 1200.0}) {
    const double cut = Cut(prefill_max, m.PhasePower(PrefillLikePhase(), Megahertz(f)));
    EXPECT_GE(cut, 0.15) << f;
    EXPECT_LE(cut, 0.25) << f;
    const double slowdown = m.Time(DecodeLikePhase(), Megahertz(f)).time_s / decode_max_s - 1;
    EXPECT_LT(slowdown, 0.05) << f;
  }
}

TEST(GpuPowerModelCalibrationTest, H100PrefillAbout700DecodeAbout380) {
  const GpuPowerModel m = ModelOf("h100-80gb-sxm");
  EXPECT_NEAR(m.PhasePower(PrefillLikePhase(), Megahertz(1980)).value(), 700, 35);
  EXPECT_NEAR(m.PhasePower(DecodeLikePhase(), Megahertz(1980)).value(), 380, 20);
  EXPECT_NEAR(m.Power(Activity{}, Megahertz(1980)).value(), 75, 1);
  const double cut = Cut(m.PhasePower(PrefillLikePhase(), Megahertz(1980)),
                         m.PhasePower(PrefillLikePhase(), Megahertz(1620)));
  EXPECT_GE(cut, 0.15);
  EXPECT_LE(cut, 0.25);
}

TEST(GpuPowerModelCalibrationTest, H200DecodeWithinPublishedRange) {
  const GpuPowerModel m = ModelOf("h200-141gb-sxm");
  EXPECT_NEAR(m.PhasePower(PrefillLikePhase(), Megahertz(1980)).value(), 700, 35);
  // Decode draws only 137-300 W of the 700 W TDP (brief §1), whether saturated or lightly loaded.
  for (double busy : {0.4, 0.7, 1.0}) {
    const Watts decode = m.PhasePower(DecodeLikePhase(), Megahertz(1980), busy);
    EXPECT_GE(decode.value(), 137) << busy;
    EXPECT_LE(decode.value(), 300) << busy;
  }
}

TEST(GpuPowerModelShapeTest, PowerRisesWithClockAndActivityAndFallsFasterThanClock) {
  for (const char* gpu :
       {"a100-40gb-sxm", "a100-80gb-sxm", "h100-80gb-sxm", "h100-80gb-pcie", "h200-141gb-sxm"}) {
    const GpuPowerModel m = ModelOf(gpu);
    const auto clocks = m.spec().SupportedSmClocks();  // highest first
    for (size_t i = 1; i < clocks.size(); ++i) {
      for (const Phase& phase : {PrefillLikePhase(), DecodeLikePhase()}) {
        EXPECT_GT(m.PhasePower(phase, clocks[i - 1]), m.PhasePower(phase, clocks[i]))
            << gpu << " " << clocks[i].value();
        EXPECT_LE(m.Time(phase, clocks[i - 1]).time_s, m.Time(phase, clocks[i]).time_s);
      }
    }
    const Megahertz f_max = m.spec().sm_clock_max;
    const Megahertz f_mid = m.spec().SnapClock(f_max * 0.8);
    EXPECT_LT(m.DynamicScale(f_mid), f_mid / f_max) << gpu;  // faster than f near the top
    EXPECT_LT(m.Power({.busy = 1, .sm = 0.5, .mem = 0.5}, f_max),
              m.Power({.busy = 1, .sm = 0.9, .mem = 0.5}, f_max));
    EXPECT_LT(m.Power({.busy = 1, .sm = 0.5, .mem = 0.2}, f_max),
              m.Power({.busy = 1, .sm = 0.5, .mem = 0.8}, f_max));
  }
}

TEST(GpuPowerModelShapeTest, ComputeBoundTimeScalesAsInverseClock) {
  const GpuPowerModel m = ModelOf("a100-80gb-sxm");
  const double t_max = m.Time(PrefillLikePhase(), Megahertz(1410)).time_s;
  const double t_half = m.Time(PrefillLikePhase(), Megahertz(705)).time_s;
  EXPECT_NEAR(t_half / t_max, 2.0, 0.01);
  // Roofline: 17.5 GB * 2048 FLOP/B at 312 TFLOP/s.
  EXPECT_NEAR(t_max, 17.5e9 * 2048 / 312e12, 0.001);
}

TEST(GpuPowerModelTest, MaxClockUnderFindsHighestFittingClock) {
  const GpuPowerModel m = ModelOf("a100-80gb-sxm");
  const Megahertz ceiling(1410);
  const Megahertz f = m.MaxClockUnder(Watts(300), PrefillLikePhase(), 1.0, ceiling);
  EXPECT_LE(m.PhasePower(PrefillLikePhase(), f).value(), 300);
  EXPECT_GT(m.PhasePower(PrefillLikePhase(), f + m.spec().sm_clock_step).value(), 300);
  // A generous limit leaves the ceiling; an impossible one gives the lowest clock.
  EXPECT_EQ(m.MaxClockUnder(Watts(1000), PrefillLikePhase(), 1.0, Megahertz(1200)),
            Megahertz(1200));
  EXPECT_EQ(m.MaxClockUnder(Watts(10), PrefillLikePhase(), 1.0, ceiling), m.spec().sm_clock_min);
}

}  // namespace
}  // namespace headroom::model
