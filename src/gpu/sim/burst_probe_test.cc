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

TEST(BurstProbeTest, TheComparisonLocksAtTheClockThatHoldsPrefillUnderTheCap) {
  static const auto catalog = catalog::HardwareCatalog::Embedded();
  for (const char* name : {"a100-80gb-sxm", "h100-80gb-sxm"}) {
    const model::GpuSpec& spec = **catalog->Gpu(name);
    const CapVersusLock c = CompareCapAndLock(spec);
    EXPECT_DOUBLE_EQ(c.cap.value(), spec.tdp.value() * 0.75) << name;
    EXPECT_LT(c.lock, spec.sm_clock_max) << name;
    EXPECT_GE(c.lock, spec.sm_clock_min) << name;
    EXPECT_GT(c.capped.peak, c.cap) << name;  // capping is reactive
    EXPECT_GT(c.capped.above_limit.count(), 0) << name;
    EXPECT_LE(c.locked.peak.value(), c.cap.value() + 1) << name;  // locking is proactive
  }
}

}  // namespace
}  // namespace headroom::gpu::sim
