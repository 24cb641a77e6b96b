#include "gpu/sim/sim_device.h"

#include <set>

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/testing/embedded_catalogs.h"

namespace headroom::gpu::sim {
namespace {

using core::Megahertz;
using core::Watts;
using std::chrono::seconds;

using catalog::testing::A100;

SimOptions WithScript(const char* script) {
  SimOptions options;
  options.script = *LoadScript::Parse(script);
  return options;
}

TEST(SimDeviceTest, ReadingsFollowTheInjectedClock) {
  core::FakeClock clock;
  SimDevice device(0, A100(), &clock, WithScript("prefill"));
  const core::Joules e0 = *device.EnergyCounter();
  clock.Advance(seconds(2));
  const core::Joules e1 = *device.EnergyCounter();
  EXPECT_NEAR((e1 - e0).value(), 2 * 400, 25);
  EXPECT_NEAR(device.PowerAverage()->value(), 400, 20);
  // Prefill draws a little over TDP at 1410 MHz, so the default limit trims a clock step or two.
  EXPECT_GE(*device.SmClock(), Megahertz(1380));
  EXPECT_LE(*device.SmClock(), Megahertz(1410));
  // No time passed: identical readings.
  EXPECT_EQ(*device.EnergyCounter(), e1);
}

TEST(SimDeviceTest, IdentityIsStableAndUnique) {
  core::FakeClock clock;
  auto devices = CreateSimDevices(A100(), 8, &clock, SimOptions{});
  ASSERT_EQ(devices.size(), 8u);
  std::set<std::string> uuids;
  for (const auto& d : devices) uuids.insert(d->info().uuid);
  EXPECT_EQ(uuids.size(), 8u);
  EXPECT_EQ(devices[2]->info().index, 2);
  EXPECT_EQ(devices[2]->info().name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(devices[2]->info().uuid, CreateSimDevices(A100(), 3, &clock, {})[2]->info().uuid);
  EXPECT_EQ(devices[0]->info().uuid.rfind("GPU-", 0), 0u);
  EXPECT_EQ(devices[0]->info().uuid.size(), 40u);
}

TEST(SimDeviceTest, ControlsValidateAndChangeLaterReadings) {
  core::FakeClock clock;
  SimDevice device(0, A100(), &clock, WithScript("prefill"));

  auto bad = device.SetPowerLimit(Watts(50));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), core::Code::kOutOfRange);
  EXPECT_EQ(device.PowerLimits()->requested, Watts(400));

  ASSERT_TRUE(device.SetPowerLimit(Watts(250)));
  EXPECT_EQ(device.PowerLimits()->enforced, Watts(250));
  clock.Advance(seconds(5));
  EXPECT_NEAR(device.PowerAverage()->value(), 250, 15);
  ASSERT_TRUE(device.ResetPowerLimit());
  EXPECT_EQ(device.PowerLimits()->enforced, Watts(400));

  EXPECT_FALSE(device.LockSmClocks(Megahertz(1200), Megahertz(1100)));
  EXPECT_FALSE(device.LockSmClocks(Megahertz(210), Megahertz(2000)));
  ASSERT_TRUE(device.LockSmClocks(Megahertz(210), Megahertz(1101)));
  ASSERT_TRUE(device.SmClockLock()->has_value());
  EXPECT_EQ(device.SmClockLock()->value().max, Megahertz(1095));  // snapped to the 15 MHz grid
  clock.Advance(seconds(5));  // the limiter recovers from the 250 W cap within seconds
  EXPECT_EQ(*device.SmClock(), Megahertz(1095));
  ASSERT_TRUE(device.ResetSmClocks());
  EXPECT_FALSE(device.SmClockLock()->has_value());
}

TEST(SimDeviceTest, NotRootMeansPermissionDeniedAndNothingChanges) {
  core::FakeClock clock;
  SimOptions options;
  options.controls_denied = true;
  SimDevice device(0, A100(), &clock, options);
  auto st = device.SetPowerLimit(Watts(300));
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code(), core::Code::kPermissionDenied);
  EXPECT_EQ(device.PowerLimits()->requested, Watts(400));
  EXPECT_EQ(device.LockSmClocks(Megahertz(210), Megahertz(1000)).error().code(),
            core::Code::kPermissionDenied);
}

TEST(SimDeviceTest, UnsupportedReadsAreTypedNotSupported) {
  core::FakeClock clock;
  SimOptions options;
  options.unsupported = {"power_instant"};
  SimDevice device(0, A100(), &clock, options);
  auto read = device.PowerInstant();
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), core::Code::kUnimplemented);
  EXPECT_TRUE(device.PowerAverage());
}

TEST(SimDeviceTest, PowerSamplesHoldSubSecondHistory) {
  core::FakeClock clock;
  SimDevice device(0, A100(), &clock, WithScript("prefill:200ms,idle:800ms"));
  clock.Advance(seconds(1));
  auto samples = device.PowerSamples(0);
  ASSERT_TRUE(samples);
  ASSERT_EQ(samples->size(), 10u);  // one per 100 ms sensor period
  EXPECT_GT((*samples)[0].power.value(), 380);
  EXPECT_NEAR(samples->back().power.value(), 63, 0.5);
  EXPECT_LT((*samples)[0].timestamp_us, (*samples)[1].timestamp_us);
  EXPECT_TRUE(device.PowerSamples(samples->back().timestamp_us)->empty());
}

TEST(SimDeviceTest, SupportedClocksAndMemory) {
  core::FakeClock clock;
  SimDevice device(0, A100(), &clock, WithScript("decode"));
  auto clocks = device.SupportedSmClocks();
  ASSERT_TRUE(clocks);
  EXPECT_EQ(clocks->front(), Megahertz(1410));
  EXPECT_EQ(clocks->back(), Megahertz(210));
  auto memory = device.Memory();
  ASSERT_TRUE(memory);
  EXPECT_EQ(memory->total_bytes, 80ULL << 30);
  EXPECT_GT(memory->used_bytes, memory->total_bytes / 2);
}

TEST(SimDeviceTest, PowerSmoothingIsUnimplementedUnlessTheGpuHasIt) {
  core::FakeClock clock;
  SimDevice device(0, A100(), &clock, SimOptions{});
  auto state = device.PowerSmoothing();
  ASSERT_FALSE(state);
  EXPECT_EQ(state.error().code(), core::Code::kUnimplemented);
  EXPECT_NE(state.error().message().find("no power smoothing"), std::string::npos);
  auto set = device.SetPowerSmoothingEnabled(true);
  ASSERT_FALSE(set);
  EXPECT_EQ(set.error().code(), core::Code::kUnimplemented);
}

TEST(SimDeviceTest, PowerSmoothingHoldsTheFloorAndLimitsTheRampDown) {
  core::FakeClock clock;
  // Decode draws a steady ~251 W below the power limit, so its power never wants to fall.
  SimOptions options = WithScript("decode:2s,idle:20s");
  options.power_smoothing = true;
  SimDevice device(0, A100(), &clock, options);
  auto initial = device.PowerSmoothing();
  ASSERT_TRUE(initial) << initial.error().message();
  EXPECT_FALSE(initial->enabled);
  EXPECT_EQ(initial->profiles, kSimPowerSmoothingPresets);
  // A 30% floor of the A100's 400 W TDP, 100 W/s down after 1 s of hysteresis.
  ASSERT_TRUE(device.UpdatePowerSmoothingProfile(
      2, {.floor_percent = 30, .ramp_down_w_per_s = 100, .ramp_down_hysteresis_ms = 1000}));
  ASSERT_TRUE(device.ActivatePowerSmoothingProfile(2));
  ASSERT_TRUE(device.SetPowerSmoothingEnabled(true));
  auto state = device.PowerSmoothing();
  ASSERT_TRUE(state);
  EXPECT_TRUE(state->enabled);
  EXPECT_EQ(state->active_profile, 2);
  EXPECT_EQ(state->applied_floor, Watts(120));
  EXPECT_EQ(state->profiles[2].floor_percent, 30);
  EXPECT_EQ(state->profiles[2].ramp_up_w_per_s, kSimPowerSmoothingPresets[2].ramp_up_w_per_s);

  clock.Advance(std::chrono::milliseconds(2500));  // the load stopped 0.5 s ago: hysteresis
  EXPECT_NEAR(device.PowerInstant()->value(), 251, 5);
  clock.Advance(std::chrono::milliseconds(1550));  // 1 s into the ramp down at 100 W/s
  EXPECT_NEAR(device.PowerInstant()->value(), 151, 5);
  clock.Advance(seconds(6));  // down to the floor, not to idle
  EXPECT_NEAR(device.PowerInstant()->value(), 120, 1);
  ASSERT_TRUE(device.SetPowerSmoothingEnabled(false));
  clock.Advance(seconds(2));
  EXPECT_LT(device.PowerInstant()->value(), 100);
  EXPECT_EQ(device.PowerSmoothing()->applied_floor, Watts(0));
}

TEST(SimDeviceTest, PowerSmoothingRefusesWhatTheDriverWould) {
  core::FakeClock clock;
  SimOptions options;
  options.power_smoothing = true;
  SimDevice device(0, A100(), &clock, options);
  for (const core::Status& st :
       {device.ActivatePowerSmoothingProfile(5), device.UpdatePowerSmoothingProfile(-1, {}),
        device.UpdatePowerSmoothingProfile(0, {.floor_percent = 95}),
        device.UpdatePowerSmoothingProfile(0, {.ramp_up_w_per_s = 0}),
        device.UpdatePowerSmoothingProfile(0, {.ramp_down_hysteresis_ms = -1})}) {
    ASSERT_FALSE(st);
    EXPECT_EQ(st.error().code(), core::Code::kOutOfRange) << st.error().message();
  }
  EXPECT_EQ(device.PowerSmoothing()->profiles, kSimPowerSmoothingPresets);  // nothing changed
  options.controls_denied = true;
  SimDevice not_root(1, A100(), &clock, options);
  auto denied = not_root.SetPowerSmoothingEnabled(true);
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().code(), core::Code::kPermissionDenied);
}

}  // namespace
}  // namespace headroom::gpu::sim
