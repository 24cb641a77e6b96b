#include "mig/slice_model.h"

#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "mig/attribution.h"
#include "mig/mig_test_support.h"
#include "mig/training_workload.h"

namespace headroom::mig {
namespace {

using testing::Embedded;
using testing::Model;
using testing::Reference;

MeasuredWorkload Synthetic(double host_s, double per_sample_s, double work_j_per_sample) {
  // Points generated from a known truth on the reference GPU (no optimizer traffic: head only).
  MeasuredWorkload w;
  w.name = "synthetic";
  w.parameters = 1e6;
  w.head_only = true;
  w.flops_per_sample = 1e9;
  w.default_batch = 128;
  const model::GpuSpec& ref = Reference();
  for (int batch : {32, 128}) {
    const double t = host_s + batch * per_sample_s;
    w.measured.push_back(
        MeasuredPoint{.batch = batch,
                      .samples_per_s = batch / t,
                      .power_w = 75 + ref.power.active_w + batch * work_j_per_sample / t,
                      .memory_gib = 0.5 + batch * 0.01});
  }
  return w;
}

TEST(WorkloadFitTest, RecoversTheLinesItWasGeneratedFrom) {
  auto fit = FitWorkload(Synthetic(0.010, 0.001, 0.05), Reference(), 75);
  ASSERT_TRUE(fit) << fit.error().message();
  EXPECT_NEAR(fit->host_s, 0.010, 1e-9);
  EXPECT_NEAR(fit->optimizer_s, 0, 1e-12);
  EXPECT_NEAR(fit->per_sample_s, 0.001, 1e-9);
  EXPECT_NEAR(fit->energy_per_sample_j, 0.05, 1e-9);
  EXPECT_NEAR(fit->fixed_energy_j, 0, 1e-9);
  EXPECT_NEAR(fit->memory_per_sample_gib, 0.01, 1e-9);
  EXPECT_NEAR(fit->memory_fixed_gib, 0.5, 1e-9);
  EXPECT_LT(fit->power_fit_error_w, 1e-6);
}

TEST(WorkloadFitTest, OptimizerTrafficComesOutOfTheFixedTime) {
  MeasuredWorkload w = Synthetic(0.010, 0.001, 0.05);
  w.head_only = false;
  w.parameters = 1e9;  // AdamW, 28 GB per step
  w.optimizer = Optimizer::kAdamW;
  auto fit = FitWorkload(w, Reference(), 75);
  ASSERT_TRUE(fit);
  const double expected = 28e9 / (Reference().memory_bandwidth_bytes_per_s * 0.9);
  EXPECT_NEAR(fit->optimizer_s, expected, 1e-9);
  EXPECT_NEAR(fit->host_s + fit->optimizer_s, 0.010, 1e-9);
}

TEST(WorkloadFitTest, RejectsPointsItCannotFit) {
  MeasuredWorkload one = Synthetic(0.01, 0.001, 0.05);
  one.measured.pop_back();
  EXPECT_FALSE(FitWorkload(one, Reference(), 75));
  MeasuredWorkload slower = Synthetic(0.01, 0.001, 0.05);
  slower.measured[1].samples_per_s = slower.measured[1].batch / 0.001;  // iteration got shorter
  auto fit = FitWorkload(slower, Reference(), 75);
  ASSERT_FALSE(fit);
  EXPECT_NE(fit.error().message().find("does not grow"), std::string::npos);
}

TEST(WorkloadFitTest, EveryMeasuredWorkloadFits) {
  for (const MeasuredWorkload& w : Embedded().workloads.workloads()) {
    auto fit = FitWorkload(w, Reference(), Embedded().workloads.reference_idle_w());
    ASSERT_TRUE(fit) << w.name << ": " << fit.error().message();
    EXPECT_GT(fit->per_sample_s, 0) << w.name;
    EXPECT_GE(fit->host_s, 0) << w.name;
    EXPECT_GT(fit->compute_share, 0) << w.name;
    EXPECT_LE(fit->compute_share, 1) << w.name;
    EXPECT_GT(fit->energy_per_sample_j, 0) << w.name;
    // The power model cannot be far off the measured whole-GPU power.
    EXPECT_LT(fit->power_fit_error_w, 100) << w.name;
  }
}

TEST(SliceModelTest, TheWholeReferenceGpuReproducesTheMeasurements) {
  const SliceModel model = Model("h200");
  const Slice whole = WholeGpuSlice(model.gpu(), model.mig());
  for (const MeasuredWorkload& w : Embedded().workloads.workloads()) {
    auto fit = FitWorkload(w, Reference(), Embedded().workloads.reference_idle_w());
    ASSERT_TRUE(fit);
    for (const MeasuredPoint& p : w.measured) {
      const double rate =
          p.batch / model.IterationSeconds(*fit, p.batch, whole, model.gpu().sm_clock_max);
      EXPECT_NEAR(rate, p.samples_per_s, 1e-6 * p.samples_per_s) << w.name << " b" << p.batch;
    }
  }
}

TEST(SliceModelTest, FewerSmsAndMemorySlicesAreNeverFaster) {
  const SliceModel model = Model("h200");
  const core::Megahertz f = model.gpu().sm_clock_max;
  for (const MeasuredWorkload& w : Embedded().workloads.workloads()) {
    auto fit = FitWorkload(w, Reference(), Embedded().workloads.reference_idle_w());
    ASSERT_TRUE(fit);
    double previous = 0;
    // Profiles in catalog order, keeping only those that grow in SMs and memory slices.
    for (const char* name : {"1g.18gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"}) {
      const GiProfile* p = model.mig().FindProfile(name);
      ASSERT_NE(p, nullptr);
      const double rate =
          w.default_batch / model.IterationSeconds(*fit, w.default_batch, InstanceSlice(*p, 0), f);
      EXPECT_GE(rate, previous) << w.name << " on " << name;
      previous = rate;
    }
  }
}

TEST(SliceModelTest, SmallJobsKeepMoreOfTheirSpeedPerSmThanLargeOnes) {
  const SliceModel model = Model("h200");
  const core::Megahertz f = model.gpu().sm_clock_max;
  const Slice whole = WholeGpuSlice(model.gpu(), model.mig());
  const Slice small = InstanceSlice(*model.mig().FindProfile("2g.35gb"), 0);
  auto relative = [&](const char* name) {
    const PlanJob job = testing::Job(name, 1);
    return model.IterationSeconds(job.fit, job.batch, whole, f) /
           model.IterationSeconds(job.fit, job.batch, small, f);
  };
  EXPECT_GT(relative("efficientnet-b0-finetune"), relative("gpt2-774m-pretrain"));
  EXPECT_GT(relative("resnet50-finetune"), relative("resnet50-pretrain"));
}

TEST(SliceModelTest, OutOfMemoryNamesTheNeedAndTheSlice) {
  const SliceModel model = Model("h200");
  const PlanJob big = testing::Job("gpt2-1.5b-pretrain", 1);
  const Slice small = InstanceSlice(*model.mig().FindProfile("1g.18gb"), 3);
  auto status = model.CheckFits(big.fit, big.batch, small);
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message().find("out of memory on 1g.18gb@3"), std::string::npos)
      << status.error().message();
  EXPECT_TRUE(model.CheckFits(big.fit, big.batch, WholeGpuSlice(model.gpu(), model.mig())));
  EXPECT_TRUE(
      model.CheckFits(big.fit, big.batch, InstanceSlice(*model.mig().FindProfile("3g.71gb"), 0)));
}

std::vector<SliceJob> SevenOneG(const SliceModel& model, const char* workload) {
  std::vector<SliceJob> jobs;
  const PlanJob job = testing::Job(workload, 1);
  for (int start = 0; start < 7; ++start) {
    jobs.push_back(SliceJob{.fit = job.fit,
                            .batch = job.batch,
                            .slice = InstanceSlice(*model.mig().FindProfile("1g.18gb"), start)});
  }
  return jobs;
}

TEST(SliceModelTest, TheSharedPowerLimitThrottlesEveryInstance) {
  const SliceModel unlimited = Model("h200", 700);
  const SliceModel limited = Model("h200", 300);
  const auto jobs = SevenOneG(unlimited, "resnet50-pretrain");
  const OperatingPoint free = unlimited.Solve(jobs);
  const OperatingPoint capped = limited.Solve(jobs);
  EXPECT_GT(free.power_w, 300);
  EXPECT_LE(capped.power_w, 300 + 1e-9);
  EXPECT_TRUE(capped.power_limited);
  EXPECT_LT(capped.clock.value(), free.clock.value());
  for (size_t k = 0; k < jobs.size(); ++k) {
    EXPECT_LT(capped.jobs[k].samples_per_s, free.jobs[k].samples_per_s);
  }
}

TEST(SliceModelTest, AnIdleGpuDrawsIdlePower) {
  const SliceModel model = Model("h200");
  const OperatingPoint idle = model.Solve({});
  EXPECT_DOUBLE_EQ(idle.power_w, model.idle_power().value());
  EXPECT_FALSE(idle.power_limited);
}

TEST(AttributionTest, SmShareAndActivityWeightedSplits) {
  // 100 s window, 75 W idle, 27.5 kJ in all: 7.5 kJ static, 20 kJ dynamic.
  const std::vector<InstanceUse> uses = {
      {.sm_count = 60, .busy_s = 100, .has_job = true},
      {.sm_count = 30, .busy_s = 50, .has_job = true},
      {.sm_count = 30, .busy_s = 0, .has_job = false},
  };
  const EnergyShares s = AttributeEnergy(27500, 75, 100, uses);
  EXPECT_DOUBLE_EQ(s.sm_share_j[0], 27500 * 0.5);
  EXPECT_DOUBLE_EQ(s.sm_share_j[1], 27500 * 0.25);
  EXPECT_DOUBLE_EQ(s.sm_share_j[2], 0);
  EXPECT_DOUBLE_EQ(s.unattributed_sm_share_j, 27500 * 0.25);
  // Dynamic by SMs x busy seconds: 6000 vs 1500 SM-seconds.
  EXPECT_DOUBLE_EQ(s.activity_j[0], 7500 * 0.5 + 20000 * 0.8);
  EXPECT_DOUBLE_EQ(s.activity_j[1], 7500 * 0.25 + 20000 * 0.2);
  EXPECT_DOUBLE_EQ(s.unattributed_activity_j, 7500 * 0.25);
  EXPECT_NEAR(s.activity_j[0] + s.activity_j[1] + s.unattributed_activity_j, 27500, 1e-9);
}

TEST(AttributionTest, ANoisyMeasurementBelowIdleIsAllStatic) {
  const std::vector<InstanceUse> uses = {{.sm_count = 16, .busy_s = 1, .has_job = true}};
  const EnergyShares s = AttributeEnergy(50, 75, 1, uses);
  EXPECT_DOUBLE_EQ(s.activity_j[0], 50);
  EXPECT_DOUBLE_EQ(s.sm_share_j[0], 50);
}

}  // namespace
}  // namespace headroom::mig
