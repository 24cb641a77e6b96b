#include "mig/apply_plan.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "catalog/mig_catalog.h"

namespace headroom::mig {
namespace {

const GpuMigSpec& A100() {
  static const GpuMigSpec* spec = [] {
    auto catalog = catalog::MigCatalog::Embedded();
    EXPECT_TRUE(catalog) << catalog.error().message();
    auto gpu = catalog->Gpu("a100-80gb-sxm");
    EXPECT_TRUE(gpu) << gpu.error().message();
    return new GpuMigSpec(**gpu);
  }();
  return *spec;
}

Layout Parse(const std::string& text) {
  auto layout = ParseLayout(text);
  EXPECT_TRUE(layout) << layout.error().message();
  return layout.value_or(Layout{});
}

// A device state as a driver reports it: the layout with ids given in creation order.
std::vector<GpuInstanceState> Device(const std::string& text) {
  std::vector<GpuInstanceState> state = ExpandLayout(A100(), Parse(text));
  int gi_id = 1;
  for (GpuInstanceState& gi : state) {
    gi.id = gi_id++;
    int ci_id = 0;
    for (ComputeInstanceState& ci : gi.compute_instances) ci.id = ci_id++;
  }
  return state;
}

std::vector<std::string> Steps(const ApplyPlan& plan) {
  std::vector<std::string> out;
  for (const ApplyStep& step : plan.steps) out.push_back(DescribeStep(step));
  return out;
}

std::vector<std::string> Plan(const std::string& current, const std::string& target) {
  auto plan = PlanApply(A100(), current.empty() ? std::vector<GpuInstanceState>{} : Device(current),
                        Parse(target));
  EXPECT_TRUE(plan) << plan.error().message();
  return plan ? Steps(*plan) : std::vector<std::string>{"error"};
}

using Strings = std::vector<std::string>;

TEST(ApplyPlanTest, FromEmptyCreatesLargestFirstThenComputeInstances) {
  EXPECT_EQ(
      Plan("", "1g.10gb@6,2g.20gb@4,3g.40gb@0/2c+1c"),
      (Strings{"create 3g.40gb@0", "create 2g.20gb@4", "create 1g.10gb@6",
               "create 2c compute instance in 3g.40gb@0", "create 1c compute instance in 3g.40gb@0",
               "create 2c compute instance in 2g.20gb@4",
               "create 1c compute instance in 1g.10gb@6"}));
}

TEST(ApplyPlanTest, SameSizeInstancesAreCreatedInSlotOrder) {
  EXPECT_EQ(Plan("", "1g.10gb@1,1g.10gb@0"), (Strings{"create 1g.10gb@0", "create 1g.10gb@1",
                                                      "create 1c compute instance in 1g.10gb@0",
                                                      "create 1c compute instance in 1g.10gb@1"}));
}

TEST(ApplyPlanTest, TheSameLayoutNeedsNoStepAndKeepsEveryInstance) {
  auto plan = PlanApply(A100(), Device("3g.40gb@0,2g.20gb@4,1g.10gb@6"),
                        Parse("1g.10gb@6,3g.40gb@0,2g.20gb@4"));
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_TRUE(plan->empty());
  EXPECT_EQ(plan->kept.size(), 3u);
}

TEST(ApplyPlanTest, ToEmptyDestroysComputeInstancesThenGpuInstancesSmallestFirst) {
  auto plan = PlanTransition(A100(), Device("3g.40gb@0/2c+1c,2g.20gb@4,1g.10gb@6"), {});
  ASSERT_TRUE(plan);
  EXPECT_EQ(
      Steps(*plan),
      (Strings{"destroy compute instance 0 (1c) of 1g.10gb@6",
               "destroy compute instance 0 (2c) of 2g.20gb@4",
               "destroy compute instance 1 (1c) of 3g.40gb@0",
               "destroy compute instance 0 (2c) of 3g.40gb@0", "destroy 1g.10gb@6 (GPU instance 3)",
               "destroy 2g.20gb@4 (GPU instance 2)", "destroy 3g.40gb@0 (GPU instance 1)"}));
}

TEST(ApplyPlanTest, KeepsIdenticalInstancesAndReplacesTheRest) {
  auto plan =
      PlanApply(A100(), Device("3g.40gb@0,2g.20gb@4,1g.10gb@6"), Parse("3g.40gb@0,3g.40gb@4"));
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(Steps(*plan),
            (Strings{"destroy compute instance 0 (1c) of 1g.10gb@6",
                     "destroy compute instance 0 (2c) of 2g.20gb@4",
                     "destroy 1g.10gb@6 (GPU instance 3)", "destroy 2g.20gb@4 (GPU instance 2)",
                     "create 3g.40gb@4", "create 3c compute instance in 3g.40gb@4"}));
  ASSERT_EQ(plan->kept.size(), 1u);
  EXPECT_EQ(plan->kept[0].id, 1);
  // The destroy steps name the existing instances; the new one is found by its start slot.
  EXPECT_EQ(plan->steps[2].gpu_instance_id, 3);
  EXPECT_EQ(plan->steps[4].gpu_instance_id, ComputeInstanceState::kNoId);
  EXPECT_EQ(plan->steps[4].profile_id, 9);
}

TEST(ApplyPlanTest, SamePlacementWithOtherComputeInstancesKeepsTheGpuInstance) {
  auto plan = PlanApply(A100(), Device("4g.40gb@0,3g.40gb@4"), Parse("4g.40gb@0/2c+2c,3g.40gb@4"));
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(Steps(*plan), (Strings{"destroy compute instance 0 (4c) of 4g.40gb@0",
                                   "create 2c compute instance in 4g.40gb@0",
                                   "create 2c compute instance in 4g.40gb@0"}));
  EXPECT_EQ(plan->steps[1].gpu_instance_id, 1);
}

TEST(ApplyPlanTest, AnotherProfileAtTheSameSlotIsReplaced) {
  EXPECT_EQ(
      Plan("4g.40gb@0", "3g.40gb@0"),
      (Strings{"destroy compute instance 0 (4c) of 4g.40gb@0", "destroy 4g.40gb@0 (GPU instance 1)",
               "create 3g.40gb@0", "create 3c compute instance in 3g.40gb@0"}));
}

TEST(ApplyPlanTest, AGpuInstanceWithoutComputeInstancesIsReportedAndCanBeRestored) {
  std::vector<GpuInstanceState> bare = {{.id = 5, .profile = "2g.20gb", .start = 2}};
  EXPECT_EQ(FormatLayout(ToLayout(A100(), bare)), "2g.20gb@2/0c");
  auto plan = PlanTransition(A100(), {}, bare);
  ASSERT_TRUE(plan) << plan.error().message();
  EXPECT_EQ(Steps(*plan), (Strings{"create 2g.20gb@2"}));
  EXPECT_EQ(FormatLayout(ToLayout(A100(), Device("3g.40gb@0/2c+1c,1g.10gb@6"))),
            "3g.40gb@0/2c+1c,1g.10gb@6");
}

TEST(ApplyPlanTest, AnInvalidTargetIsRefusedNamingTheInstance) {
  auto plan = PlanApply(A100(), {}, Parse("4g.40gb@0,2g.20gb@2"));
  ASSERT_FALSE(plan);
  EXPECT_EQ(plan.error().code(), core::Code::kInvalidArgument);
  EXPECT_EQ(plan.error().message(), "'2g.20gb@2' overlaps '4g.40gb@0' on memory slices 2-3");
  auto unknown = PlanApply(A100(), {}, Parse("1g.5gb@0"));
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("1g.5gb"), std::string::npos);
}

TEST(ApplyPlanTest, ACurrentProfileTheCatalogLacksIsAnError) {
  std::vector<GpuInstanceState> current = {{.id = 1, .profile = "9g.99gb", .start = 0}};
  auto plan = PlanApply(A100(), current, Parse("7g.80gb@0"));
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message().find("9g.99gb"), std::string::npos) << plan.error().message();
}

}  // namespace
}  // namespace headroom::mig
