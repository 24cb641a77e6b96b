#include "mig/planner.h"

#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "mig/layout.h"
#include "mig/mig_test_support.h"

namespace headroom::mig {
namespace {

using testing::Embedded;
using testing::Job;
using testing::Model;

// Random job sets over the workloads that fit the whole GPU, each minutes to an hour long.
std::vector<PlanJob> RandomJobs(const SliceModel& model, std::mt19937& rng, int count) {
  const Slice whole = WholeGpuSlice(model.gpu(), model.mig());
  const auto& workloads = Embedded().workloads.workloads();
  std::uniform_int_distribution<size_t> pick(0, workloads.size() - 1);
  std::uniform_real_distribution<double> minutes(2, 60);
  std::vector<PlanJob> jobs;
  for (int i = 0; i < count; ++i) {
    const MeasuredWorkload& w = workloads[pick(rng)];
    const PlanJob probe = Job(w.name, 1);
    if (!model.CheckFits(probe.fit, probe.batch, whole)) {
      --i;
      continue;
    }
    const double whole_rate = w.measured.back().samples_per_s;
    jobs.push_back(Job(w.name, whole_rate * 60 * minutes(rng), w.name + "#" + std::to_string(i)));
  }
  return jobs;
}

void ExpectSound(const SliceModel& model, const PlanRequest& request, const PlanResult& result) {
  const PlanOption& best = result.best;
  ASSERT_TRUE(best.feasible) << best.infeasible_reason;
  if (best.layout) {
    EXPECT_TRUE(ValidateLayout(model.mig(), *best.layout)) << FormatLayout(*best.layout);
  }
  ASSERT_EQ(best.jobs.size(), request.jobs.size());
  size_t queued = 0;
  for (const auto& q : best.queues) queued += q.size();
  EXPECT_EQ(queued, request.jobs.size()) << "every job runs exactly once";
  for (size_t j = 0; j < request.jobs.size(); ++j) {
    const JobOutcome& out = best.jobs[j];
    ASSERT_GE(out.instance, 0);
    EXPECT_TRUE(
        model.CheckFits(request.jobs[j].fit, request.jobs[j].batch, best.slices[out.instance]))
        << request.jobs[j].name << " on " << best.slices[out.instance].name;
    EXPECT_GT(out.end_s, out.start_s);
  }
  for (const PlanOption& b : result.baselines) {
    if (!b.feasible) continue;
    if (request.objective == Objective::kEnergy) {
      EXPECT_LE(best.energy_j, b.energy_j * (1 + 1e-9)) << b.name;
    } else {
      EXPECT_LE(best.makespan_s, b.makespan_s * (1 + 1e-9)) << b.name;
    }
  }
}

TEST(PlannerTest, RandomJobSetsGetValidLayoutsThatBeatEveryBaseline) {
  std::mt19937 rng(7);
  for (const char* gpu : {"h200", "a100-80gb", "a100-40gb"}) {
    const SliceModel model = Model(gpu);
    for (int trial = 0; trial < 6; ++trial) {
      PlanRequest request;
      request.jobs = RandomJobs(model, rng, 1 + trial % 6);
      request.objective = trial % 2 == 0 ? Objective::kEnergy : Objective::kMakespan;
      auto result = Plan(model, request);
      ASSERT_TRUE(result) << result.error().message();
      SCOPED_TRACE(std::string(gpu) + " trial " + std::to_string(trial));
      ExpectSound(model, request, *result);
    }
  }
}

TEST(PlannerTest, TheMakespanBoundIsMetWhenTheWholeGpuMeetsIt) {
  const SliceModel model = Model("h200");
  PlanRequest request;
  request.jobs = {Job("resnet50-finetune", 2e6), Job("gpt2-124m-finetune", 1e5),
                  Job("densenet121-pretrain", 6e5)};
  auto unbounded = Plan(model, request);
  ASSERT_TRUE(unbounded);
  request.makespan_bound_s = unbounded->baselines.front().makespan_s;
  auto bounded = Plan(model, request);
  ASSERT_TRUE(bounded);
  EXPECT_TRUE(bounded->best.meets_bound);
  EXPECT_LE(bounded->best.makespan_s, *request.makespan_bound_s * (1 + 1e-9));
  ExpectSound(model, request, *bounded);
}

TEST(PlannerTest, SmallJobsSideBySideSaveEnergyOverRunningThemInTurn) {
  const SliceModel model = Model("h200");
  PlanRequest request;
  for (int i = 0; i < 4; ++i) {
    request.jobs.push_back(Job("efficientnet-b0-finetune", 1e6, "ft" + std::to_string(i)));
  }
  auto result = Plan(model, request);
  ASSERT_TRUE(result);
  ASSERT_TRUE(result->best.layout) << "partitioning helps small jobs";
  EXPECT_LT(result->best.energy_j, 0.9 * result->baselines.front().energy_j);
}

TEST(PlannerTest, AJobThatFitsNowhereMakesEveryOptionInfeasible) {
  const SliceModel model = Model("a100-40gb");
  PlanRequest request;
  PlanJob huge = Job("gpt2-1.5b-pretrain", 1000);
  huge.batch = 64;  // far beyond 40 GiB
  request.jobs = {huge};
  auto result = Plan(model, request);
  ASSERT_TRUE(result);
  EXPECT_FALSE(result->best.feasible);
  EXPECT_NE(result->best.infeasible_reason.find("out of memory"), std::string::npos)
      << result->best.infeasible_reason;
}

TEST(PlannerTest, EnergyIsTheIntegralOfPowerAndAttributionAddsUp) {
  const SliceModel model = Model("h200");
  PlanRequest request;
  request.jobs = {Job("resnet50-finetune", 1e6), Job("mobilenet-v2-pretrain", 5e5),
                  Job("gpt2-124m-finetune", 5e4)};
  auto result = Plan(model, request);
  ASSERT_TRUE(result);
  for (const PlanOption* o : {&result->best, &result->baselines[0], &result->baselines[1]}) {
    double integral = 0, attributed = o->unattributed_j, sm_share = 0;
    for (const PowerSegment& s : o->power) integral += s.power_w * (s.end_s - s.start_s);
    for (const JobOutcome& j : o->jobs) {
      attributed += j.energy_activity_j;
      sm_share += j.energy_sm_share_j;
    }
    EXPECT_NEAR(integral, o->energy_j, 1e-6 * o->energy_j) << o->name;
    EXPECT_NEAR(attributed, o->energy_j, 1e-6 * o->energy_j) << o->name;
    EXPECT_LE(sm_share, o->energy_j * (1 + 1e-9)) << o->name;
    EXPECT_NEAR(o->power.back().end_s, o->makespan_s, 1e-9);
  }
}

TEST(PlannerTest, ExtraLayoutsAreScoredAndInvalidOnesRejected) {
  const SliceModel model = Model("h200");
  PlanRequest request;
  request.jobs = {Job("resnet50-finetune", 1e6)};
  request.extra_layouts = {*ParseLayout("4g.71gb@0,3g.71gb@4")};
  auto result = Plan(model, request);
  ASSERT_TRUE(result);
  ASSERT_EQ(result->extra.size(), 1u);
  EXPECT_TRUE(result->extra[0].feasible);
  request.extra_layouts = {*ParseLayout("4g.71gb@0,4g.71gb@4")};
  EXPECT_FALSE(Plan(model, request));
}

TEST(PlannerTest, RejectsEmptyAndZeroSampleJobSets) {
  const SliceModel model = Model("h200");
  EXPECT_FALSE(Plan(model, PlanRequest{}));
  PlanRequest request;
  request.jobs = {Job("resnet50-finetune", 0)};
  EXPECT_FALSE(Plan(model, request));
}

}  // namespace
}  // namespace headroom::mig
