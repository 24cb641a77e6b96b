// mig apply below its flags on simulated GPUs: each GPU handed to the callback as it is done, in
// order, and a layout a GPU cannot hold refused before anything changes, naming the GPU.
#include "app/mig_device.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace headroom::app {
namespace {

MigApplyRequest ApplyOnTwoSimGpus(const std::string& layout) {
  BackendOptions backend;
  backend.sim_count = 2;
  return {.catalog_dir = {},
          .backend = backend,
          .layout = layout,
          .dry_run = false,
          .force = false,
          .on_gpu = {}};
}

TEST(AppMigApplyTest, EachGpuIsHandedOverAsItIsDone) {
  MigApplyRequest request = ApplyOnTwoSimGpus("3g.40gb@0,2g.20gb@4,1g.10gb@6");
  std::vector<int> seen;
  request.on_gpu = [&seen](const MigApplied& gpu) {
    EXPECT_EQ(gpu.target, "3g.40gb@0,2g.20gb@4,1g.10gb@6");
    EXPECT_TRUE(gpu.report.ok());
    seen.push_back(gpu.info.index);
  };
  auto applied = MigApply(request);
  ASSERT_TRUE(applied) << applied.error().message();
  EXPECT_EQ(applied->backend, "sim");
  EXPECT_EQ(seen, (std::vector<int>{0, 1}));
  ASSERT_EQ(applied->gpus.size(), 2u);
  EXPECT_EQ(applied->gpus[1].report.after, "3g.40gb@0,2g.20gb@4,1g.10gb@6");
}

TEST(AppMigApplyTest, ALayoutTheGpuCannotHoldIsRefusedNamingTheGpu) {
  MigApplyRequest request = ApplyOnTwoSimGpus("3g.40gb@0,3g.40gb@0");
  int calls = 0;
  request.on_gpu = [&calls](const MigApplied&) { ++calls; };
  auto applied = MigApply(request);
  ASSERT_FALSE(applied);
  EXPECT_EQ(applied.error().code(), core::Code::kInvalidArgument);
  EXPECT_EQ(applied.error().message(),
            "GPU 0: invalid layout on a100-80gb-sxm: '3g.40gb@0' overlaps '3g.40gb@0' on memory "
            "slices 0-3");
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace headroom::app
