#include "gpu/sim/sim_gpu.h"

#include <algorithm>

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"

namespace headroom::gpu::sim {
namespace {

using core::Megahertz;
using core::Watts;
using std::chrono::milliseconds;
using std::chrono::seconds;

const model::GpuSpec& Spec(const char* name) {
  static const auto catalog = catalog::HardwareCatalog::Embedded();
  return **catalog->Gpu(name);
}

SimGpu Gpu(const char* script, const char* type = "a100-80gb-sxm") {
  return SimGpu(Spec(type), *LoadScript::Parse(script));
}

// Highest true power seen while advancing `gpu` by `total` in 1 ms steps.
double PeakOver(SimGpu& gpu, core::Duration total) {
  double peak = 0;
  for (core::Duration t{0}; t < total; t += milliseconds(1)) {
    gpu.Advance(milliseconds(1));
    peak = std::max(peak, gpu.true_power().value());
  }
  return peak;
}

TEST(SimGpuTest, IdleDrawsIdlePowerAndCountsEnergy) {
  SimGpu gpu = Gpu("idle");
  gpu.Advance(seconds(10));
  EXPECT_NEAR(gpu.average_power().value(), 63, 0.01);
  EXPECT_NEAR(gpu.true_energy().value(), 630, 0.1);
  EXPECT_NEAR(gpu.energy_counter().value(), 630, 63 * 0.1 + 0.001);  // lags <= one update
  EXPECT_EQ(gpu.sm_clock(), Megahertz(210));
  EXPECT_EQ(gpu.throttle_reasons(), kThrottleGpuIdle);
}

TEST(SimGpuTest, EnergyCounterMovesInStepsOfItsUpdatePeriod) {
  SimGpu gpu = Gpu("decode");
  gpu.Advance(milliseconds(1000));
  const double before = gpu.energy_counter().value();
  gpu.Advance(milliseconds(30));  // shorter than A100's 100 ms update period
  EXPECT_EQ(gpu.energy_counter().value(), before);
  gpu.Advance(milliseconds(100));
  EXPECT_GT(gpu.energy_counter().value(), before);
}

TEST(SimGpuTest, PowerLimitHoldsSustainedLoadBelowTheLimit) {
  SimGpu gpu = Gpu("prefill");
  gpu.set_power_limit(Watts(300));
  gpu.Advance(seconds(5));
  EXPECT_NEAR(gpu.average_power().value(), 300, 15);
  EXPECT_LE(gpu.true_power().value(), 305);
  EXPECT_LT(gpu.sm_clock(), Megahertz(1410));
  EXPECT_TRUE(gpu.throttle_reasons() & kThrottleSwPowerCap);
}

TEST(SimGpuTest, PowerCapIsReactiveSoBurstsPassButAClockLockPreventsThem) {
  // A 100 ms prefill burst under a 250 W cap spikes far above the cap before the firmware acts
  // (brief §1: capping is reactive, clock locking proactive).
  SimGpu capped = Gpu("prefill:100ms,idle:900ms");
  capped.set_power_limit(Watts(250));
  const double capped_peak = PeakOver(capped, milliseconds(100));
  EXPECT_GT(capped_peak, 330);

  const model::GpuPowerModel model(Spec("a100-80gb-sxm"));
  const Megahertz fit =
      model.MaxClockUnder(Watts(250), model::PrefillLikePhase(), 1.0, Megahertz(1410));
  SimGpu locked = Gpu("prefill:100ms,idle:900ms");
  locked.set_clock_lock(ClockLock{Megahertz(210), fit});
  EXPECT_LE(PeakOver(locked, milliseconds(100)), 250.5);
}

TEST(SimGpuTest, ClockLockAppliesAtOnce) {
  SimGpu gpu = Gpu("prefill");
  gpu.Advance(seconds(2));
  const double before = gpu.true_power().value();
  gpu.set_clock_lock(ClockLock{Megahertz(210), Megahertz(1110)});
  gpu.Advance(milliseconds(1));
  EXPECT_EQ(gpu.sm_clock(), Megahertz(1110));
  EXPECT_LT(gpu.true_power().value(), before * 0.85);
  EXPECT_TRUE(gpu.throttle_reasons() & kThrottleClockSetting);
}

TEST(SimGpuTest, InstantReadingSeesPhasesThatTheOneSecondAverageSmooths) {
  SimGpu gpu = Gpu("prefill:500ms,idle:500ms");
  gpu.Advance(milliseconds(3400));  // inside a prefill half, after a sensor window closed
  EXPECT_GT(gpu.instant_power().value(), 350);
  EXPECT_NEAR(gpu.average_power().value(), (63 + 400) / 2.0, 25);
  gpu.Advance(milliseconds(400));  // into the idle half
  EXPECT_NEAR(gpu.instant_power().value(), 63, 1);
}

TEST(SimGpuTest, UtilizationAndTemperatureFollowLoad) {
  SimGpu gpu = Gpu("decode*0.5");
  gpu.Advance(seconds(120));
  const auto util = gpu.utilization();
  EXPECT_NEAR(util.gpu_percent, 50, 0.5);
  EXPECT_GT(util.memory_percent, 40);
  EXPECT_GT(gpu.temperature().value(), 30 + 63 * 0.1 + 5);
}

TEST(SimGpuTest, HopperPrefillNearTdpAndDecodeLower) {
  SimGpu prefill = Gpu("prefill", "h100-80gb-sxm");
  prefill.Advance(seconds(3));
  EXPECT_NEAR(prefill.average_power().value(), 700, 35);
  SimGpu decode = Gpu("decode", "h100-80gb-sxm");
  decode.Advance(seconds(3));
  EXPECT_NEAR(decode.average_power().value(), 380, 20);
}

}  // namespace
}  // namespace headroom::gpu::sim
