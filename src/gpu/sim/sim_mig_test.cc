#include "gpu/sim/sim_mig.h"

#include <gtest/gtest.h>

#include "catalog/hardware_catalog.h"
#include "catalog/mig_catalog.h"
#include "gpu/sim/sim_device.h"

namespace headroom::gpu::sim {
namespace {

const mig::GpuMigSpec& A100Mig() {
  static const auto catalog = catalog::MigCatalog::Embedded();
  return **catalog->Gpu("a100-80gb-sxm");
}

SimMig Fresh(std::vector<GpuProcess> processes = {}) {
  return SimMig(A100Mig(), true, 0, "GPU-test", std::move(processes));
}

// NVML GPU-instance profile IDs on A100 (../shared/brief/mig.md).
constexpr int k1g = 19, k2g = 14, k3g = 9, k7g = 0;

TEST(SimMigTest, CreatesInstancesWithDriverIdsAndDerivedFacts) {
  SimMig mig = Fresh();
  auto gi = mig.CreateGpuInstance(k3g, 4);
  ASSERT_TRUE(gi) << gi.error().message();
  EXPECT_EQ(*gi, 1);
  auto ci = mig.CreateComputeInstance(*gi, 2);
  ASSERT_TRUE(ci) << ci.error().message();
  EXPECT_EQ(*ci, 0);
  EXPECT_EQ(*mig.CreateComputeInstance(*gi, 1), 1);
  auto instances = mig.Instances();
  ASSERT_TRUE(instances);
  ASSERT_EQ(instances->size(), 1u);
  const MigGpuInstance& i = (*instances)[0];
  EXPECT_EQ(i.profile_id, k3g);
  EXPECT_EQ(i.start, 4);
  EXPECT_EQ(i.size, 4);
  EXPECT_EQ(i.sm_count, 42);
  ASSERT_EQ(i.compute_instances.size(), 2u);
  EXPECT_EQ(i.compute_instances[0].sm_count, 28);
  EXPECT_EQ(i.compute_instances[0].uuid.rfind("MIG-", 0), 0u);
  EXPECT_NE(i.compute_instances[0].uuid, i.compute_instances[1].uuid);
}

TEST(SimMigTest, OverlapAndCountsAreResourceErrorsBadPlacementsArgumentErrors) {
  SimMig mig = Fresh();
  ASSERT_TRUE(mig.CreateGpuInstance(k3g, 0));
  EXPECT_EQ(mig.CreateGpuInstance(k2g, 2).error().code(), core::Code::kResourceExhausted);
  EXPECT_EQ(mig.CreateGpuInstance(k7g, 0).error().code(), core::Code::kResourceExhausted);
  EXPECT_EQ(mig.CreateGpuInstance(k2g, 6).error().code(), core::Code::kInvalidArgument);
  EXPECT_EQ(mig.CreateGpuInstance(1234, 0).error().code(), core::Code::kInvalidArgument);
  auto gi = mig.CreateGpuInstance(k1g, 6);
  ASSERT_TRUE(gi);
  EXPECT_EQ(*gi, 2);
  ASSERT_TRUE(mig.CreateComputeInstance(*gi, 1));
  EXPECT_EQ(mig.CreateComputeInstance(*gi, 1).error().code(), core::Code::kResourceExhausted);
  EXPECT_EQ(mig.CreateComputeInstance(*gi, 2).error().code(), core::Code::kInvalidArgument);
}

TEST(SimMigTest, DestroyNeedsAnEmptyIdleGpuInstance) {
  SimMig mig = Fresh({{.pid = 4242, .gpu_instance_id = 2}});
  const int busy_free = *mig.CreateGpuInstance(k3g, 0);
  const int busy = *mig.CreateGpuInstance(k3g, 4);
  ASSERT_EQ(busy, 2);
  ASSERT_TRUE(mig.CreateComputeInstance(busy, 3));
  EXPECT_EQ(mig.DestroyComputeInstance(busy, 0).error().code(), core::Code::kFailedPrecondition);
  EXPECT_EQ(mig.DestroyGpuInstance(busy).error().code(), core::Code::kFailedPrecondition);
  ASSERT_TRUE(mig.CreateComputeInstance(busy_free, 3));
  EXPECT_EQ(mig.DestroyGpuInstance(busy_free).error().code(), core::Code::kFailedPrecondition);
  EXPECT_TRUE(mig.DestroyComputeInstance(busy_free, 0));
  EXPECT_TRUE(mig.DestroyGpuInstance(busy_free));
  EXPECT_EQ(mig.DestroyGpuInstance(busy_free).error().code(), core::Code::kNotFound);
  EXPECT_EQ(mig.Instances()->size(), 1u);
}

TEST(SimMigTest, RestoreKeepsIdsAndRejectsABrokenState) {
  SimMig mig = Fresh();
  std::vector<MigGpuInstance> state = {{.id = 7,
                                        .profile_id = k3g,
                                        .start = 4,
                                        .compute_instances = {{.id = 2, .compute_slices = 3}}},
                                       {.id = 3, .profile_id = k2g, .start = 0}};
  ASSERT_TRUE(mig.Restore(true, state));
  auto instances = mig.Instances();
  ASSERT_EQ(instances->size(), 2u);
  EXPECT_EQ((*instances)[0].id, 3);
  EXPECT_EQ((*instances)[1].compute_instances[0].id, 2);
  state.push_back({.id = 9, .profile_id = k2g, .start = 4});
  EXPECT_FALSE(mig.Restore(true, state));
  EXPECT_EQ(mig.Instances()->size(), 2u);
  ASSERT_TRUE(mig.Restore(false, {}));
  EXPECT_EQ(mig.Instances().error().code(), core::Code::kUnimplemented);
  EXPECT_EQ(mig.CreateGpuInstance(k7g, 0).error().code(), core::Code::kUnimplemented);
}

TEST(SimMigTest, SimDeviceWithoutMigOrWithoutRootRefuses) {
  static const auto hardware = catalog::HardwareCatalog::Embedded();
  core::FakeClock clock;
  SimDevice plain(0, **hardware->Gpu("a100-80gb-sxm"), &clock, SimOptions{});
  EXPECT_EQ(plain.MigMode().error().code(), core::Code::kUnimplemented);
  SimOptions options;
  options.mig = A100Mig();
  options.controls_denied = true;
  SimDevice user(0, **hardware->Gpu("a100-80gb-sxm"), &clock, options);
  EXPECT_TRUE(user.MigMode()->current);
  EXPECT_EQ(user.CreateGpuInstance(k7g, 0).error().code(), core::Code::kPermissionDenied);
}

TEST(SimMigTest, ModeTurnsOnAtOnceAndOffOnlyWithoutInstances) {
  SimMig mig(A100Mig(), false, 0, "GPU-test", {});
  EXPECT_FALSE(mig.mode().current);
  EXPECT_FALSE(mig.CreateGpuInstance(k7g, 0));
  ASSERT_TRUE(mig.SetEnabled(true));
  EXPECT_TRUE(mig.mode().current);
  auto gi = mig.CreateGpuInstance(k1g, 0);
  ASSERT_TRUE(gi);
  auto off = mig.SetEnabled(false);
  ASSERT_FALSE(off);
  EXPECT_EQ(off.error().code(), core::Code::kFailedPrecondition);
  EXPECT_TRUE(mig.mode().current);
  ASSERT_TRUE(mig.DestroyGpuInstance(*gi));
  ASSERT_TRUE(mig.SetEnabled(false));
  EXPECT_FALSE(mig.mode().current);
}

}  // namespace
}  // namespace headroom::gpu::sim
