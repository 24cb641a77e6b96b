// The real NVML backend, driven through dlopen of the project's fake libnvidia-ml.so.1.
// Every test runs in its own process (gtest_discover_tests), so environment settings made
// before opening the library configure that process's fake GPUs.
#include <cstdlib>
#include <string>

#include <dlfcn.h>
#include <gtest/gtest.h>

#include "gpu/nvml/nvml_device.h"

namespace headroom::gpu::nvml {
namespace {

using core::Megahertz;
using core::Watts;

class NvmlBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* var :
         {"HEADROOM_FAKE_NVML_GPU", "HEADROOM_FAKE_NVML_COUNT", "HEADROOM_FAKE_NVML_LOAD",
          "HEADROOM_FAKE_NVML_NOT_ROOT", "HEADROOM_FAKE_NVML_DRIVER_NOT_LOADED",
          "HEADROOM_FAKE_NVML_LOST_AFTER", "CUDA_VISIBLE_DEVICES", "HEADROOM_FAKE_NVML_MIG",
          "HEADROOM_FAKE_NVML_MIG_LAYOUT", "HEADROOM_FAKE_NVML_MIG_STATE",
          "HEADROOM_FAKE_NVML_MIG_FAIL_CREATE", "HEADROOM_FAKE_NVML_PROCESSES",
          "HEADROOM_FAKE_NVML_MIG_PERTURB", "HEADROOM_FAKE_NVML_MIG_PROFILES_NEED_MIG",
          "HEADROOM_FAKE_NVML_POWER_SMOOTHING"}) {
      ::unsetenv(var);
    }
    ::setenv("HEADROOM_NVML_LIBRARY", FAKE_NVML, 1);
    ::setenv("HEADROOM_FAKE_NVML_CLOCK", "manual", 1);
  }

  // Moves the fake's manual clock (the hook lives in the library the backend loaded).
  void Advance(std::chrono::nanoseconds d) {
    void* lib = dlopen(std::getenv("HEADROOM_NVML_LIBRARY"), RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(lib, nullptr);
    auto* advance = reinterpret_cast<void (*)(long long)>(dlsym(lib, "headroomFakeNvmlAdvanceNs"));
    ASSERT_NE(advance, nullptr);
    advance(d.count());
    dlclose(lib);
  }

  // One fake A100 with MIG mode on, holding `layout` (empty: no instances).
  std::vector<std::unique_ptr<Device>> OpenMigGpu(const char* layout = "") {
    ::setenv("HEADROOM_FAKE_NVML_COUNT", "1", 1);
    ::setenv("HEADROOM_FAKE_NVML_MIG", "1", 1);
    ::setenv("HEADROOM_FAKE_NVML_MIG_LAYOUT", layout, 1);
    auto devices = Open();
    EXPECT_EQ(devices.size(), 1u);
    return devices;
  }

  std::vector<std::unique_ptr<Device>> Open(NvmlOpenOptions options = {}) {
    auto devices = OpenNvmlDevices(options);
    EXPECT_TRUE(devices) << devices.error().message();
    return devices ? std::move(*devices) : std::vector<std::unique_ptr<Device>>{};
  }
};

TEST_F(NvmlBackendTest, ListsGpusWithTheirIdentityLimitsAndClocks) {
  ::setenv("HEADROOM_FAKE_NVML_GPU", "h100-80gb-sxm", 1);
  ::setenv("HEADROOM_FAKE_NVML_COUNT", "3", 1);
  auto devices = Open();
  ASSERT_EQ(devices.size(), 3u);
  Device& d = *devices[2];
  EXPECT_EQ(d.info().index, 2);
  EXPECT_EQ(d.info().name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.info().uuid.rfind("GPU-", 0), 0u);
  EXPECT_EQ(d.info().sm_clock_max, Megahertz(1980));
  auto limits = d.PowerLimits();
  ASSERT_TRUE(limits) << limits.error().message();
  EXPECT_EQ(limits->default_limit, Watts(700));
  EXPECT_EQ(limits->min, Watts(200));
  EXPECT_EQ(limits->enforced, Watts(700));
  auto clocks = d.SupportedSmClocks();
  ASSERT_TRUE(clocks);
  EXPECT_EQ(clocks->front(), Megahertz(1980));
  EXPECT_EQ(d.Memory()->total_bytes, d.info().memory_total_bytes.value());
}

TEST_F(NvmlBackendTest, EnergyAndPowerInSiUnitsMatchTheModel) {
  ::setenv("HEADROOM_FAKE_NVML_LOAD", "decode", 1);
  auto devices = Open();
  ASSERT_FALSE(devices.empty());
  Device& d = *devices[0];
  const core::Joules e0 = *d.EnergyCounter();
  Advance(std::chrono::seconds(10));
  const core::Joules e1 = *d.EnergyCounter();
  // A100 decode draws ~251 W: 10 s -> ~2510 J, read from a mJ counter.
  EXPECT_NEAR((e1 - e0).value(), 2514, 30);
  EXPECT_NEAR(d.PowerAverage()->value(), 251.4, 1.0);  // field 185
  EXPECT_NEAR(d.PowerInstant()->value(), 251.4, 1.0);  // field 186
  EXPECT_EQ(*d.SmClock(), Megahertz(1410));
  EXPECT_NEAR(d.Utilization()->gpu_percent, 100, 0.5);
}

TEST_F(NvmlBackendTest, DrainsTheDriverPowerSampleRing) {
  ::setenv("HEADROOM_FAKE_NVML_LOAD", "prefill:200ms,idle:800ms", 1);
  auto devices = Open();
  ASSERT_FALSE(devices.empty());
  Advance(std::chrono::seconds(2));
  auto samples = devices[0]->PowerSamples(0);
  ASSERT_TRUE(samples) << samples.error().message();
  ASSERT_EQ(samples->size(), 20u);
  EXPECT_GT((*samples)[0].power.value(), 380);
  auto none = devices[0]->PowerSamples(samples->back().timestamp_us);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->empty());
}

TEST_F(NvmlBackendTest, SettersChangeLaterGettersAndValidateRange) {
  ::setenv("HEADROOM_FAKE_NVML_LOAD", "prefill", 1);
  auto devices = Open();
  ASSERT_FALSE(devices.empty());
  Device& d = *devices[0];
  auto bad = d.SetPowerLimit(Watts(450));
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), core::Code::kOutOfRange);
  EXPECT_EQ(d.PowerLimits()->requested, Watts(400));

  ASSERT_TRUE(d.SetPowerLimit(Watts(250)));
  EXPECT_EQ(d.PowerLimits()->enforced, Watts(250));
  Advance(std::chrono::seconds(5));
  EXPECT_NEAR(d.PowerAverage()->value(), 250, 15);
  EXPECT_TRUE(*d.ThrottleReasons() & kThrottleSwPowerCap);
  ASSERT_TRUE(d.ResetPowerLimit());
  EXPECT_EQ(d.PowerLimits()->enforced, Watts(400));

  ASSERT_TRUE(d.LockSmClocks(Megahertz(210), Megahertz(1110)));
  Advance(std::chrono::seconds(5));
  EXPECT_EQ(*d.SmClock(), Megahertz(1110));
  EXPECT_EQ(d.SmClockLock()->value().max, Megahertz(1110));
  ASSERT_TRUE(d.ResetSmClocks());
  EXPECT_FALSE(d.SmClockLock()->has_value());
}

TEST_F(NvmlBackendTest, NotRootIsPermissionDeniedWithNvmlText) {
  ::setenv("HEADROOM_FAKE_NVML_NOT_ROOT", "1", 1);
  auto devices = Open();
  ASSERT_FALSE(devices.empty());
  auto st = devices[0]->SetPowerLimit(Watts(300));
  ASSERT_FALSE(st);
  EXPECT_EQ(st.error().code(), core::Code::kPermissionDenied);
  EXPECT_NE(st.error().message().find("Insufficient Permissions"), std::string::npos)
      << st.error().message();
  EXPECT_EQ(devices[0]->PowerLimits()->requested, Watts(400));
}

TEST_F(NvmlBackendTest, DriverNotLoadedIsOneClearLine) {
  ::setenv("HEADROOM_FAKE_NVML_DRIVER_NOT_LOADED", "1", 1);
  auto devices = OpenNvmlDevices({});
  ASSERT_FALSE(devices);
  EXPECT_EQ(devices.error().code(), core::Code::kUnavailable);
  EXPECT_NE(devices.error().message().find("Driver Not Loaded"), std::string::npos);
  EXPECT_NE(devices.error().message().find("--backend sim"), std::string::npos);
}

TEST_F(NvmlBackendTest, GpuLostMidRunIsDataLoss) {
  ::setenv("HEADROOM_FAKE_NVML_LOST_AFTER", "1s", 1);
  auto devices = Open();
  ASSERT_FALSE(devices.empty());
  ASSERT_TRUE(devices[0]->EnergyCounter());
  Advance(std::chrono::seconds(2));
  auto read = devices[0]->EnergyCounter();
  ASSERT_FALSE(read);
  EXPECT_EQ(read.error().code(), core::Code::kDataLoss);
  EXPECT_NE(read.error().message().find("GPU 0"), std::string::npos);
}

TEST_F(NvmlBackendTest, SelectsByIndexUuidAndCudaVisibleDevices) {
  ::setenv("HEADROOM_FAKE_NVML_COUNT", "4", 1);
  std::string uuid3;
  {
    auto all = Open();
    ASSERT_EQ(all.size(), 4u);
    uuid3 = all[3]->info().uuid;
  }
  auto picked = Open({.selectors = {"1", uuid3}});
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[0]->info().index, 1);
  EXPECT_EQ(picked[1]->info().index, 3);

  ::setenv("CUDA_VISIBLE_DEVICES", "2,0", 1);
  auto visible = Open();
  ASSERT_EQ(visible.size(), 2u);
  EXPECT_EQ(visible[0]->info().index, 2);

  // A MIG device selects its physical GPU (power is per GPU); two of one GPU select it once.
  const std::string mig3 = "MIG-" + uuid3.substr(4);
  ::setenv("CUDA_VISIBLE_DEVICES", (mig3 + "," + mig3).c_str(), 1);
  auto mig = Open();
  ASSERT_EQ(mig.size(), 1u);
  EXPECT_EQ(mig[0]->info().uuid, uuid3);
  EXPECT_TRUE(mig[0]->PowerLimits());

  auto missing = OpenNvmlDevices({.selectors = {"GPU-00000000-dead-beef-0000-000000000000"}});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message().find("GPU-00000000-dead"), std::string::npos);
}

TEST_F(NvmlBackendTest, LegacyLibraryFallsBackAndReportsMissingCapabilities) {
  ::setenv("HEADROOM_NVML_LIBRARY", FAKE_NVML_LEGACY, 1);
  ::setenv("HEADROOM_FAKE_NVML_LOAD", "decode", 1);
  auto devices = Open();  // nvmlInit / nvmlDeviceGetCount / GetHandleByIndex, unversioned
  ASSERT_FALSE(devices.empty());
  Device& d = *devices[0];
  Advance(std::chrono::seconds(2));
  EXPECT_EQ(d.EnergyCounter().error().code(), core::Code::kUnimplemented);
  EXPECT_EQ(d.PowerAverage().error().code(), core::Code::kUnimplemented);
  EXPECT_NEAR(d.PowerInstant()->value(), 251.4, 1.0);  // the classic reading (GA100: instant)
  EXPECT_TRUE(d.ThrottleReasons());                    // the deprecated throttle name
}

// MIG through NVML's MIG entry points (profile info, placements, instances, MIG device handles).
TEST_F(NvmlBackendTest, ReadsMigModeInstancesAndMigDeviceUuids) {
  auto devices = OpenMigGpu("4g.40gb@0/2c+1c,2g.20gb@4,1g.10gb@6");
  ASSERT_EQ(devices.size(), 1u);
  Device& d = *devices[0];
  auto mode = d.MigMode();
  ASSERT_TRUE(mode) << mode.error().message();
  EXPECT_TRUE(mode->current);
  auto instances = d.MigInstances();
  ASSERT_TRUE(instances) << instances.error().message();
  ASSERT_EQ(instances->size(), 3u);
  const MigGpuInstance& four = (*instances)[0];  // created first: the largest
  EXPECT_EQ(four.profile_id, 5);
  EXPECT_EQ(four.start, 0);
  EXPECT_EQ(four.size, 4);
  EXPECT_EQ(four.sm_count, 56);
  EXPECT_EQ(four.memory_bytes, 38ULL << 30);  // 4 x 9.5 GiB in the catalog, as MiB
  ASSERT_EQ(four.compute_instances.size(), 2u);
  EXPECT_EQ(four.compute_instances[0].compute_slices, 2);
  EXPECT_EQ(four.compute_instances[1].compute_slices, 1);
  EXPECT_EQ(four.compute_instances[0].sm_count, 28);
  EXPECT_EQ(four.compute_instances[0].uuid.rfind("MIG-", 0), 0u);
  EXPECT_NE(four.compute_instances[0].uuid, four.compute_instances[1].uuid);
  EXPECT_EQ((*instances)[2].start, 6);
  EXPECT_EQ((*instances)[2].size, 1);
  // A MIG device UUID selects its physical GPU.
  auto by_mig = Open({.selectors = {four.compute_instances[1].uuid}});
  ASSERT_EQ(by_mig.size(), 1u);
  EXPECT_EQ(by_mig[0]->info().uuid, d.info().uuid);
}

TEST_F(NvmlBackendTest, CreatesAndDestroysMigInstances) {
  auto devices = OpenMigGpu();
  ASSERT_EQ(devices.size(), 1u);
  Device& d = *devices[0];
  auto gi = d.CreateGpuInstance(9, 4);
  ASSERT_TRUE(gi) << gi.error().message();
  auto ci = d.CreateComputeInstance(*gi, 3);
  ASSERT_TRUE(ci) << ci.error().message();
  auto instances = d.MigInstances();
  ASSERT_EQ(instances->size(), 1u);
  EXPECT_EQ((*instances)[0].id, *gi);
  EXPECT_EQ((*instances)[0].compute_instances.at(0).id, *ci);
  // Overlap: NVML's INSUFFICIENT_RESOURCES, named.
  auto overlap = d.CreateGpuInstance(14, 4);
  ASSERT_FALSE(overlap);
  EXPECT_EQ(overlap.error().code(), core::Code::kResourceExhausted);
  EXPECT_NE(overlap.error().message().find("NVML_ERROR_INSUFFICIENT_RESOURCES"), std::string::npos)
      << overlap.error().message();
  // A start the profile does not allow is refused before NVML is asked to create it.
  EXPECT_EQ(d.CreateGpuInstance(14, 6).error().code(), core::Code::kInvalidArgument);
  EXPECT_EQ(d.CreateComputeInstance(*gi, 7).error().code(), core::Code::kUnimplemented);
  EXPECT_FALSE(d.DestroyGpuInstance(*gi));  // it still has a compute instance
  ASSERT_TRUE(d.DestroyComputeInstance(*gi, *ci));
  ASSERT_TRUE(d.DestroyGpuInstance(*gi));
  EXPECT_TRUE(d.MigInstances()->empty());
}

TEST_F(NvmlBackendTest, MigChangesNeedRootAndIdleInstances) {
  ::setenv("HEADROOM_FAKE_NVML_PROCESSES", "4242:1,77", 1);
  auto devices = OpenMigGpu("3g.40gb@0,3g.40gb@4");
  ASSERT_EQ(devices.size(), 1u);
  auto processes = devices[0]->RunningProcesses();
  ASSERT_TRUE(processes) << processes.error().message();
  ASSERT_EQ(processes->size(), 2u);
  EXPECT_EQ((*processes)[0].pid, 4242u);
  EXPECT_EQ((*processes)[0].gpu_instance_id, 1);
  EXPECT_EQ((*processes)[0].used_memory_bytes, 512ULL << 20);
  EXPECT_FALSE((*processes)[1].gpu_instance_id.has_value());
  auto in_use = devices[0]->DestroyComputeInstance(2, 0);
  ASSERT_FALSE(in_use);
  EXPECT_EQ(in_use.error().code(), core::Code::kFailedPrecondition);
  EXPECT_NE(in_use.error().message().find("NVML_ERROR_IN_USE"), std::string::npos)
      << in_use.error().message();
}

TEST_F(NvmlBackendTest, MigWithoutRootIsPermissionDenied) {
  ::setenv("HEADROOM_FAKE_NVML_NOT_ROOT", "1", 1);
  auto devices = OpenMigGpu();
  ASSERT_EQ(devices.size(), 1u);
  auto denied = devices[0]->CreateGpuInstance(0, 0);
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().code(), core::Code::kPermissionDenied);
  EXPECT_NE(denied.error().message().find("NVML_ERROR_NO_PERMISSION"), std::string::npos);
  EXPECT_TRUE(devices[0]->MigInstances());  // reading needs no root
}

TEST_F(NvmlBackendTest, MigModeOffAndMissingMigSymbolsAreUnimplemented) {
  ::setenv("HEADROOM_FAKE_NVML_COUNT", "1", 1);
  {
    auto devices = Open();
    ASSERT_EQ(devices.size(), 1u);
    auto mode = devices[0]->MigMode();
    ASSERT_TRUE(mode);
    EXPECT_FALSE(mode->current);
    EXPECT_EQ(devices[0]->MigInstances().error().code(), core::Code::kUnimplemented);
    EXPECT_EQ(devices[0]->CreateGpuInstance(0, 0).error().code(), core::Code::kUnimplemented);
  }
  ::setenv("HEADROOM_NVML_LIBRARY", FAKE_NVML_LEGACY, 1);
  auto legacy = Open();
  ASSERT_EQ(legacy.size(), 1u);
  EXPECT_EQ(legacy[0]->MigMode().error().code(), core::Code::kUnimplemented);
  EXPECT_EQ(legacy[0]->MigInstances().error().code(), core::Code::kUnimplemented);
  EXPECT_EQ(legacy[0]->RunningProcesses().error().code(), core::Code::kUnimplemented);
}

// The driver's profile table (profile info V and possible placements _v2), read with MIG mode
// off as R580 allows; nothing about the GPU changes.
TEST_F(NvmlBackendTest, ReadsMigProfilesAndPlacementsWithMigModeOff) {
  ::setenv("HEADROOM_FAKE_NVML_COUNT", "1", 1);
  ::setenv("HEADROOM_FAKE_NVML_MIG_PERTURB", "9:sms=43", 1);
  auto devices = Open();
  ASSERT_EQ(devices.size(), 1u);
  Device& d = *devices[0];
  auto profiles = d.MigProfiles();
  ASSERT_TRUE(profiles) << profiles.error().message();
  ASSERT_EQ(profiles->size(), 7u);  // NVML values 0x0..0x4, 0x7, 0x9 on A100
  const MigProfileInfo& first = (*profiles)[0];
  EXPECT_EQ(first.nvml_profile, 0x0);
  EXPECT_EQ(first.id, 19);
  EXPECT_EQ(first.name, "MIG 1g.10gb");
  ASSERT_EQ(first.placements.size(), 7u);
  EXPECT_EQ(first.placements[6].start, 6);
  EXPECT_EQ(first.placements[6].size, 1);
  const MigProfileInfo& three = (*profiles)[2];  // NVML_GPU_INSTANCE_PROFILE_3_SLICE
  EXPECT_EQ(three.nvml_profile, 0x2);
  EXPECT_EQ(three.id, 9);
  EXPECT_EQ(three.slices, 3);
  EXPECT_EQ(three.sm_count, 43);                  // as the (perturbed) driver says
  EXPECT_EQ(three.memory_bytes, 38912ULL << 20);  // MiB from NVML, in bytes
  EXPECT_EQ(three.max_instances, 2);
  EXPECT_EQ(three.copy_engines, 3);
  ASSERT_EQ(three.placements.size(), 2u);
  EXPECT_EQ(three.placements[1].start, 4);
  EXPECT_EQ(three.placements[1].size, 4);
  EXPECT_EQ((*profiles)[5].nvml_profile, 0x7);  // 1_SLICE_REV1, the +me
  EXPECT_EQ((*profiles)[5].ofa, 1);
  EXPECT_FALSE(d.MigMode()->current);  // still off: reading changed nothing
}

TEST_F(NvmlBackendTest, ADriverThatListsProfilesOnlyInMigModeSaysSo) {
  ::setenv("HEADROOM_FAKE_NVML_COUNT", "1", 1);
  ::setenv("HEADROOM_FAKE_NVML_MIG_PROFILES_NEED_MIG", "1", 1);
  {
    auto devices = Open();
    ASSERT_EQ(devices.size(), 1u);
    auto profiles = devices[0]->MigProfiles();
    ASSERT_FALSE(profiles);
    EXPECT_EQ(profiles.error().code(), core::Code::kUnimplemented);
    EXPECT_EQ(profiles.error().message(),
              "GPU 0: MIG profiles: the driver answered no GPU-instance profile (NVML profiles "
              "0x0 to 0x11: NOT_SUPPORTED or INVALID_ARGUMENT) (MIG mode is disabled); this "
              "driver may list them only with MIG mode enabled");
  }
  auto devices = OpenMigGpu();
  ASSERT_EQ(devices.size(), 1u);
  auto profiles = devices[0]->MigProfiles();
  ASSERT_TRUE(profiles) << profiles.error().message();
  EXPECT_EQ(profiles->size(), 7u);
}

TEST_F(NvmlBackendTest, MigProfilesWithoutTheEntryPointsAreUnimplementedAndSaySo) {
  ::setenv("HEADROOM_NVML_LIBRARY", FAKE_NVML_LEGACY, 1);
  auto devices = Open();
  ASSERT_FALSE(devices.empty());
  auto profiles = devices[0]->MigProfiles();
  ASSERT_FALSE(profiles);
  EXPECT_EQ(profiles.error().code(), core::Code::kUnimplemented);
  EXPECT_EQ(profiles.error().message().rfind(
                "GPU 0: GPU-instance profiles (nvmlDeviceGetGpuInstanceProfileInfo[V]): not "
                "available in ",
                0),
            0u)
      << profiles.error().message();
  EXPECT_NE(profiles.error().message().find(FAKE_NVML_LEGACY), std::string::npos);
}

TEST_F(NvmlBackendTest, ReadsAndSetsPowerSmoothingInSiUnits) {
  ::setenv("HEADROOM_FAKE_NVML_POWER_SMOOTHING", "1", 1);
  ::setenv("HEADROOM_FAKE_NVML_COUNT", "1", 1);
  auto devices = Open();
  ASSERT_EQ(devices.size(), 1u);
  Device& d = *devices[0];
  auto state = d.PowerSmoothing();
  ASSERT_TRUE(state) << state.error().message();
  EXPECT_FALSE(state->enabled);
  EXPECT_EQ(state->active_profile, 0);
  ASSERT_EQ(state->profiles.size(), 5u);
  // The simulator's preset 1, through the fields' mW/s and ms.
  EXPECT_EQ(state->profiles[1], (PowerSmoothingProfile{.floor_percent = 30,
                                                       .ramp_up_w_per_s = 1000,
                                                       .ramp_down_w_per_s = 500,
                                                       .ramp_down_hysteresis_ms = 500}));
  EXPECT_EQ(state->lifetime_remaining_percent, 100);

  ASSERT_TRUE(d.UpdatePowerSmoothingProfile(3, {.floor_percent = 40, .ramp_up_w_per_s = 300}));
  ASSERT_TRUE(d.ActivatePowerSmoothingProfile(3));
  ASSERT_TRUE(d.SetPowerSmoothingEnabled(true));
  Advance(std::chrono::seconds(5));
  state = d.PowerSmoothing();
  ASSERT_TRUE(state) << state.error().message();
  EXPECT_TRUE(state->enabled);
  EXPECT_EQ(state->active_profile, 3);
  EXPECT_EQ(state->profiles[3].floor_percent, 40);
  EXPECT_EQ(state->profiles[3].ramp_up_w_per_s, 300);
  EXPECT_EQ(state->profiles[3].ramp_down_w_per_s, 100);  // the preset's, untouched
  EXPECT_EQ(state->applied_floor, Watts(160));           // 40% of the A100's 400 W
  // An idle GPU held at the floor.
  EXPECT_NEAR(d.PowerAverage()->value(), 160, 1);

  auto bad = d.ActivatePowerSmoothingProfile(7);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), core::Code::kInvalidArgument);
  ASSERT_TRUE(d.SetPowerSmoothingEnabled(false));
  EXPECT_FALSE(d.PowerSmoothing()->enabled);
}

TEST_F(NvmlBackendTest, PowerSmoothingUnsupportedIsUnimplementedAndSaysSo) {
  ::setenv("HEADROOM_FAKE_NVML_COUNT", "1", 1);
  auto devices = Open();
  ASSERT_EQ(devices.size(), 1u);
  auto state = devices[0]->PowerSmoothing();
  ASSERT_FALSE(state);
  EXPECT_EQ(state.error().code(), core::Code::kUnimplemented);
  EXPECT_NE(state.error().message().find("power smoothing"), std::string::npos)
      << state.error().message();
  auto set = devices[0]->SetPowerSmoothingEnabled(true);
  ASSERT_FALSE(set);
  EXPECT_EQ(set.error().code(), core::Code::kUnimplemented);
}

TEST_F(NvmlBackendTest, PowerSmoothingNeedsRoot) {
  ::setenv("HEADROOM_FAKE_NVML_POWER_SMOOTHING", "1", 1);
  ::setenv("HEADROOM_FAKE_NVML_NOT_ROOT", "1", 1);
  auto devices = Open();
  ASSERT_FALSE(devices.empty());
  auto denied = devices[0]->ActivatePowerSmoothingProfile(1);
  ASSERT_FALSE(denied);
  EXPECT_EQ(denied.error().code(), core::Code::kPermissionDenied);
}

TEST_F(NvmlBackendTest, PowerSmoothingWithoutTheEntryPointsIsUnimplemented) {
  // The 11.x-era library has neither the fields nor the setters.
  ::setenv("HEADROOM_NVML_LIBRARY", FAKE_NVML_LEGACY, 1);
  ::setenv("HEADROOM_FAKE_NVML_POWER_SMOOTHING", "1", 1);
  auto legacy = Open();
  ASSERT_FALSE(legacy.empty());
  EXPECT_EQ(legacy[0]->PowerSmoothing().error().code(), core::Code::kUnimplemented);
  auto set = legacy[0]->UpdatePowerSmoothingProfile(0, {.floor_percent = 10});
  ASSERT_FALSE(set);
  EXPECT_EQ(set.error().code(), core::Code::kUnimplemented);
  EXPECT_NE(set.error().message().find("not available"), std::string::npos);
}

}  // namespace
}  // namespace headroom::gpu::nvml
