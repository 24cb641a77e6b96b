#include "telemetry/energy_meter.h"

#include <gtest/gtest.h>

namespace headroom::telemetry {
namespace {

using core::Joules;
using core::Watts;
using std::chrono::milliseconds;

gpu::DeviceSnapshot Snap(long ms, std::optional<double> counter_j, std::optional<double> power_w,
                         std::uint64_t reasons = 0) {
  gpu::DeviceSnapshot s;
  s.time = core::TimePoint(milliseconds(ms));
  if (counter_j) s.energy_counter = Joules(*counter_j);
  if (power_w) s.power_instant = Watts(*power_w);
  s.throttle_reasons = reasons;
  return s;
}

TEST(EnergyMeterTest, PrefersTheCounterOverLongWindowsAndReportsAgreement) {
  EnergyMeter meter;
  // 2 s at 250 W: counter and integral agree.
  for (long ms = 0; ms <= 2000; ms += 100) meter.Add(Snap(ms, 1000 + 0.25 * ms, 250));
  const EnergyReport r = meter.Report();
  EXPECT_EQ(r.source, EnergySource::kCounter);
  EXPECT_NEAR(r.energy.value(), 500, 1e-9);
  EXPECT_NEAR(r.integrated_energy->value(), 500, 1e-9);
  EXPECT_NEAR(*r.disagreement, 0, 1e-9);
  EXPECT_NEAR(r.average_power.value(), 250, 1e-9);
  EXPECT_EQ(r.duration, milliseconds(2000));
  EXPECT_EQ(r.power_reading, "instant");
  EXPECT_EQ(*r.counter_update_period, milliseconds(100));
  EXPECT_TRUE(r.counter_update_period_is_upper_bound);  // it moved in every sample interval
}

TEST(EnergyMeterTest, InfersTheCounterPeriodWhenSamplingFasterThanItUpdates) {
  EnergyMeter meter;
  // Sampled every 25 ms; the counter steps every 100 ms.
  for (long ms = 0; ms <= 2000; ms += 25) meter.Add(Snap(ms, 0.25 * (ms / 100 * 100), 250));
  const EnergyReport r = meter.Report();
  EXPECT_EQ(*r.counter_update_period, milliseconds(100));
  EXPECT_FALSE(r.counter_update_period_is_upper_bound);
}

TEST(EnergyMeterTest, ShortWindowIsIntegratedAndSaysWhyNotZero) {
  EnergyMeter meter;
  // 50 ms: the counter (updating every 100 ms) has not moved.
  meter.Add(Snap(0, 1000, 300));
  meter.Add(Snap(50, 1000, 300));
  const EnergyReport r = meter.Report();
  EXPECT_EQ(r.source, EnergySource::kIntegrated);
  EXPECT_NEAR(r.energy.value(), 15, 1e-9);
  EXPECT_NE(r.source_note.find("shorter than the energy counter"), std::string::npos);
}

TEST(EnergyMeterTest, CounterResetFallsBackToTheIntegralForThatInterval) {
  EnergyMeter meter;
  meter.Add(Snap(0, 5000, 100));
  meter.Add(Snap(1000, 5100, 100));
  meter.Add(Snap(2000, 50, 100));  // driver reloaded
  meter.Add(Snap(3000, 150, 100));
  const EnergyReport r = meter.Report();
  EXPECT_EQ(r.counter_resets, 1);
  EXPECT_EQ(r.source, EnergySource::kCounter);
  EXPECT_NEAR(r.energy.value(), 300, 1e-9);
}

TEST(EnergyMeterTest, NoCounterMeansIntegrated) {
  EnergyMeter meter;
  meter.Add(Snap(0, std::nullopt, 100));
  meter.Add(Snap(2000, std::nullopt, 300));
  const EnergyReport r = meter.Report();
  EXPECT_EQ(r.source, EnergySource::kIntegrated);
  EXPECT_NEAR(r.energy.value(), 400, 1e-9);
  EXPECT_EQ(r.peak_power, Watts(300));
  EXPECT_FALSE(r.counter_energy.has_value());
  EXPECT_EQ(r.source_note, "no energy counter on this GPU");
}

TEST(EnergyMeterTest, CappedAndThrottledTimeAndPhases) {
  EnergyMeter meter;
  meter.MarkPhase("prefill");
  meter.Add(Snap(0, 0, 400, gpu::kThrottleSwPowerCap));
  meter.Add(Snap(1000, 400, 400, gpu::kThrottleSwPowerCap));
  meter.MarkPhase("decode");
  meter.Add(Snap(2000, 650, 250, gpu::kThrottleGpuIdle));
  meter.Add(Snap(3000, 900, 250));
  const EnergyReport r = meter.Report();
  EXPECT_EQ(r.time_power_capped, milliseconds(2000));
  EXPECT_EQ(r.time_throttled, milliseconds(2000));
  const auto phases = meter.Phases();
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].name, "prefill");
  EXPECT_NEAR(phases[0].energy.value(), 400, 1e-9);
  EXPECT_EQ(phases[1].duration, milliseconds(2000));
  EXPECT_NEAR(phases[1].energy.value(), 500, 1e-9);
}

}  // namespace
}  // namespace headroom::telemetry
