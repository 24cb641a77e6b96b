#include "mig/characterize.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mig/enumerate.h"
#include "mig/mig_test_support.h"

namespace headroom::mig {
namespace {

struct SweepInputs {
  std::vector<MeasuredWorkload> workloads;
  std::vector<WorkloadFit> fits;
};

SweepInputs TwoWorkloads() {
  SweepInputs in;
  for (const char* name : {"resnet50-pretrain", "gpt2-124m-finetune"}) {
    in.workloads.push_back(*testing::Embedded().workloads.Workload(name));
    in.fits.push_back(testing::Job(name, 1).fit);
  }
  return in;
}

TEST(CharacterizeSweepTest, IsWorkloadMajorAndReportsProgressAfterEachResult) {
  const SliceModel model = testing::Model("h200");
  const SweepInputs in = TwoWorkloads();
  std::vector<std::optional<Layout>> layouts = {std::nullopt};
  for (const auto& [count, layout] : EqualInstanceLayouts(model.mig())) layouts.push_back(layout);
  std::vector<double> fractions;
  const auto results =
      CharacterizeSweep(model, in.workloads, in.fits, layouts,
                        [&](double f, const std::string&) { fractions.push_back(f); });
  ASSERT_EQ(results.size(), 2 * layouts.size());
  EXPECT_EQ(results.front().layout, "MIG off");
  EXPECT_EQ(results[layouts.size()].workload, "gpt2-124m-finetune");
  ASSERT_EQ(fractions.size(), results.size());
  EXPECT_DOUBLE_EQ(fractions.back(), 1.0);
  const LayoutResult direct = CharacterizeLayout(model, layouts[2], in.workloads[1], in.fits[1],
                                                 in.workloads[1].default_batch);
  EXPECT_DOUBLE_EQ(results[layouts.size() + 2].gpu_samples_per_s, direct.gpu_samples_per_s);
}

TEST(CharacterizeSweepTest, EqualInstanceScalingIsRelativeToMigOff) {
  const SliceModel model = testing::Model("h200");
  const SweepInputs in = TwoWorkloads();
  const auto scaling = ScaleWithEqualInstances(model, in.workloads, in.fits);
  ASSERT_EQ(scaling.size(), 2u);
  for (const EqualInstanceScaling& s : scaling) {
    ASSERT_FALSE(s.throughput.empty()) << s.workload;
    EXPECT_EQ(s.throughput.size(), s.energy.size());
    // One 7g instance is nearly the whole GPU.
    EXPECT_EQ(s.throughput.front().first, 1);
    EXPECT_NEAR(s.throughput.front().second, 1.0, 0.25) << s.workload;
  }
  // Seven copies of a host-bound fine-tuning job run faster together (docs/reproduction.md).
  EXPECT_GT(scaling[1].throughput.back().second, 2.0);
}

}  // namespace
}  // namespace headroom::mig
