#include "telemetry/sampler.h"

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/testing/embedded_catalogs.h"
#include "gpu/sim/sim_device.h"
#include "gpu/testing/fault_device.h"
#include "gpu/testing/scripted_load.h"

namespace headroom::telemetry {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

using catalog::testing::A100;
using gpu::testing::ScriptedLoad;

TEST(SamplerTest, EnergyOfAScriptedLoadMatchesTheModelWithinOnePercent) {
  core::FakeClock clock;
  gpu::sim::SimDevice device(0, A100(), &clock, ScriptedLoad("prefill:1s,decode:3s"));
  auto sampler = Sampler::Create({&device}, &clock, {.interval = milliseconds(100)});
  ASSERT_TRUE(sampler);
  const core::Joules start = device.TrueEnergy();
  (*sampler)->SampleOnce();
  for (int i = 0; i < 200; ++i) {  // 20 s
    clock.Advance(milliseconds(100));
    ASSERT_TRUE((*sampler)->SampleOnce());
  }
  const core::Joules truth = device.TrueEnergy() - start;
  const EnergyReport r = (*sampler)->Reports()[0];
  EXPECT_EQ(r.source, EnergySource::kCounter);
  EXPECT_NEAR(r.energy / truth, 1.0, 0.01);
  ASSERT_TRUE(r.integrated_energy.has_value());
  EXPECT_NEAR(*r.integrated_energy / truth, 1.0, 0.01);
  EXPECT_LT(*r.disagreement, 0.01);
  EXPECT_GT(r.peak_power.value(), 380);
}

TEST(SamplerTest, PhasesAndWorkAreAttributed) {
  core::FakeClock clock;
  gpu::sim::SimDevice device(0, A100(), &clock, ScriptedLoad("decode"));
  auto sampler = *Sampler::Create({&device}, &clock, {.interval = milliseconds(100)});
  sampler->SampleOnce();
  sampler->MarkPhase("warmup");
  clock.Advance(seconds(1));
  sampler->SampleOnce();
  sampler->MarkPhase("serve");
  sampler->AddWork(100);
  sampler->AddWork(50);
  clock.Advance(seconds(2));
  sampler->SampleOnce();
  EXPECT_DOUBLE_EQ(sampler->work(), 150);
  ASSERT_EQ(sampler->work_by_phase().size(), 1u);
  EXPECT_EQ(sampler->work_by_phase()[0].first, "serve");
  const auto phases = sampler->Phases()[0];
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_NEAR(phases[1].energy.value(), 2 * 251.4, 5);
}

TEST(SamplerTest, GpuLostStopsSamplingKeepsTheDataAndTheError) {
  core::FakeClock clock;
  gpu::testing::FaultDevice device(
      std::make_unique<gpu::sim::SimDevice>(0, A100(), &clock, ScriptedLoad("decode")));
  std::vector<Sample> sunk;
  auto sampler = *Sampler::Create(
      {&device}, &clock,
      {.interval = milliseconds(100), .sink = [&](const Sample& s) { sunk.push_back(s); }});
  sampler->SampleOnce();
  clock.Advance(seconds(1));
  sampler->SampleOnce();
  device.FailWith(core::Error::DataLoss("GPU is lost"));
  clock.Advance(seconds(1));
  EXPECT_FALSE(sampler->SampleOnce());
  ASSERT_TRUE(sampler->error().has_value());
  EXPECT_EQ(sampler->error()->code(), core::Code::kDataLoss);
  EXPECT_EQ(sunk.size(), 2u);
  EXPECT_EQ(sampler->Recent().size(), 2u);
  EXPECT_NEAR(sampler->Reports()[0].energy.value(), 251.4, 5);
}

TEST(SamplerTest, ThreadSamplesAtIntervalsOnTheInjectedClock) {
  core::FakeClock clock;
  gpu::sim::SimDevice device(0, A100(), &clock, ScriptedLoad("idle"));
  auto sampler =
      *Sampler::Create({&device}, &clock, {.interval = milliseconds(250), .ring_capacity = 10});
  const core::TimePoint start = clock.Now();
  sampler->Start();
  // The fake clock lets the thread run through virtual time; wait until it has some samples.
  while (sampler->Recent().size() < 10) std::this_thread::yield();
  sampler->Stop();
  const auto recent = sampler->Recent();
  ASSERT_EQ(recent.size(), 10u);  // the ring keeps only the newest
  for (size_t i = 1; i < recent.size(); ++i) {
    EXPECT_EQ(recent[i].snapshot.time - recent[i - 1].snapshot.time, milliseconds(250));
  }
  EXPECT_EQ((recent.back().snapshot.time - start) % milliseconds(250), milliseconds(0));
}

TEST(SamplerTest, DriverSamplesRevealSpikesThatASlowPollMisses) {
  for (const bool ring : {true, false}) {
    core::FakeClock clock;
    gpu::sim::SimOptions options = ScriptedLoad("idle:500ms,prefill:200ms,idle:300ms");
    if (!ring) options.unsupported = {"power_samples"};
    gpu::sim::SimDevice device(0, A100(), &clock, options);
    auto sampler = *Sampler::Create({&device}, &clock, {.interval = seconds(1)});
    sampler->SampleOnce();
    for (int i = 0; i < 5; ++i) {  // polls land at whole seconds, inside the idle part
      clock.Advance(seconds(1));
      sampler->SampleOnce();
    }
    const EnergyReport r = sampler->Reports()[0];
    if (ring) {
      EXPECT_GT(r.peak_power.value(), 380) << "the 200 ms prefill spikes, from the driver's ring";
      EXPECT_GE(r.driver_samples, 45);  // one per 100 ms sensor period
      EXPECT_FALSE(sampler->RecentDriverSamples().empty());
    } else {
      EXPECT_LT(r.peak_power.value(), 200) << "a 1 s poll alone sees only idle readings";
      EXPECT_EQ(r.driver_samples, 0);
    }
  }
}

TEST(SamplerTest, RejectsBadIntervals) {
  core::FakeClock clock;
  gpu::sim::SimDevice device(0, A100(), &clock, {});
  EXPECT_FALSE(Sampler::Create({&device}, &clock, {.interval = milliseconds(5)}));
  EXPECT_FALSE(Sampler::Create({&device}, &clock, {.interval = std::chrono::minutes(2)}));
  EXPECT_FALSE(Sampler::Create({}, &clock, {}));
}

}  // namespace
}  // namespace headroom::telemetry
