#include "gpu/sim/burst_probe.h"

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"

namespace headroom::gpu::sim {
namespace {

TEST(BurstProbeTest, CapLetsTheBurstThroughForAWhileALockDoesNot) {
  static const auto catalog = catalog::HardwareCatalog::Embedded();
  const model::GpuSpec& spec = **catalog->Gpu("a100-80gb-sxm");
  const LoadScript burst = *LoadScript::Parse("prefill:200ms,idle:800ms");
  const auto capped =
      ProbeBurst(spec, burst, core::Watts(300), std::nullopt, std::chrono::milliseconds(200));
  EXPECT_GT(capped.peak.value(), 380);
  EXPECT_GT(capped.above_limit, std::chrono::milliseconds(20));
  const auto locked = ProbeBurst(spec, burst, core::Watts(300),
                                 ClockLock{core::Megahertz(210), core::Megahertz(1050)},
                                 std::chrono::milliseconds(200));
  EXPECT_LE(locked.peak.value(), 300);
  EXPECT_EQ(locked.above_limit.count(), 0);
}

}  // namespace
}  // namespace headroom::gpu::sim
