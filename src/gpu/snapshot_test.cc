#include "gpu/snapshot.h"

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/testing/embedded_catalogs.h"
#include "gpu/sim/sim_device.h"
#include "gpu/testing/fault_device.h"

namespace headroom::gpu {
namespace {

using catalog::testing::A100;

TEST(SnapshotTest, UnsupportedReadsAreAbsentNotErrors) {
  core::FakeClock clock;
  sim::SimOptions options;
  options.unsupported = {"temperature", "energy"};
  sim::SimDevice device(0, A100(), &clock, options);
  clock.Advance(std::chrono::seconds(1));
  auto snap = TakeSnapshot(device, clock.Now());
  ASSERT_TRUE(snap) << snap.error().message();
  EXPECT_FALSE(snap->temperature.has_value());
  EXPECT_FALSE(snap->energy_counter.has_value());
  ASSERT_TRUE(snap->power_average.has_value());
  EXPECT_NEAR(snap->power_average->value(), 63, 0.5);
  ASSERT_TRUE(snap->power_limits.has_value());
  EXPECT_EQ(snap->power_limits->enforced, core::Watts(400));
}

TEST(SnapshotTest, LostGpuFailsTheSnapshotNamingTheGpu) {
  core::FakeClock clock;
  testing::FaultDevice device(
      std::make_unique<sim::SimDevice>(3, A100(), &clock, sim::SimOptions{}));
  ASSERT_TRUE(TakeSnapshot(device, clock.Now()));
  device.FailWith(core::Error::DataLoss("GPU is lost"));
  auto snap = TakeSnapshot(device, clock.Now());
  ASSERT_FALSE(snap);
  EXPECT_EQ(snap.error().code(), core::Code::kDataLoss);
  EXPECT_EQ(snap.error().message(), "GPU 3: GPU is lost");
}

}  // namespace
}  // namespace headroom::gpu
