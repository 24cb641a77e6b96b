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

}  // namespace
}  // namespace headroom::gpu::sim
