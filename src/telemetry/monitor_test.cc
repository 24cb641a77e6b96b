#include "telemetry/monitor.h"

#include <gtest/gtest.h>

#include "catalog/testing/embedded_catalogs.h"
#include "gpu/sim/sim_device.h"
#include "gpu/testing/scripted_load.h"

namespace headroom::telemetry {
namespace {

using catalog::testing::A100;
using gpu::testing::ScriptedLoad;
using std::chrono::milliseconds;

// On a virtual clock: a sample per GPU per interval, timed from the start, with the energy the
// counter says was used since then, until the duration is up.
TEST(MonitorTest, ASamplePerGpuPerIntervalWithTheEnergySinceTheStart) {
  core::FakeClock clock;
  gpu::sim::SimDevice a(0, A100(), &clock, ScriptedLoad("decode:1s"));
  gpu::sim::SimDevice b(1, A100(), &clock, ScriptedLoad("prefill:1s"));
  std::vector<MonitorSample> samples;
  const core::Joules start = a.TrueEnergy();
  ASSERT_TRUE(RunMonitor({&a, &b}, clock,
                         {.interval = milliseconds(500), .duration = milliseconds(1500)},
                         [&](const MonitorSample& s) { samples.push_back(s); }));
  ASSERT_EQ(samples.size(), 6u);
  EXPECT_DOUBLE_EQ(samples[0].time_s, 0.5);
  EXPECT_EQ(samples[0].gpu, 0);
  EXPECT_EQ(samples[1].gpu, 1);
  EXPECT_DOUBLE_EQ(samples[5].time_s, 1.5);
  ASSERT_TRUE(samples[4].energy_since_start.has_value());
  EXPECT_NEAR(samples[4].energy_since_start->value() / (a.TrueEnergy() - start).value(), 1.0, 0.02);
  EXPECT_GT(samples[5].energy_since_start->value(), samples[4].energy_since_start->value())
      << "prefill draws more than decode";
}

TEST(MonitorTest, AStopEndsItBeforeTheNextSample) {
  core::FakeClock clock;
  gpu::sim::SimDevice a(0, A100(), &clock, ScriptedLoad("decode:1s"));
  const std::atomic<bool> stop{true};
  int samples = 0;
  ASSERT_TRUE(RunMonitor({&a}, clock, {.interval = milliseconds(500), .stop = &stop},
                         [&](const MonitorSample&) { ++samples; }));
  EXPECT_EQ(samples, 0);
}

}  // namespace
}  // namespace headroom::telemetry
