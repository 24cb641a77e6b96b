// The fake NVML's MIG set-up and persistence: pretend processes from the environment, an initial
// layout, and the state file through which MIG changes outlive the process that made them (so a
// test can run `mig apply` and then `mig show`). Test-only; not thread-safe (the fake locks).
#ifndef HEADROOM_TESTS_FAKE_NVML_FAKE_MIG_STATE_H_
#define HEADROOM_TESTS_FAKE_NVML_FAKE_MIG_STATE_H_

#include <memory>
#include <string>
#include <vector>

#include "core/result.h"
#include "gpu/device.h"
#include "gpu/sim/sim_device.h"
#include "mig/profile.h"

namespace headroom::fake_nvml {

// "4242:1,777": pid 4242 in GPU instance 1, pid 777 on the whole GPU; each uses 512 MiB.
[[nodiscard]] core::Result<std::vector<gpu::GpuProcess>> ParseProcesses(const std::string& text);

// What the fake driver reports differently from the catalog (HEADROOM_FAKE_NVML_MIG_PERTURB),
// e.g. "9:sms=61,0:memory_mib=71424,19:absent,14:starts=0/2": per profile ID, one of sms,
// memory_mib, slices, instances, copy, decoders, encoders, jpeg, ofa (a whole number), starts
// ('/'-separated) or absent (the driver lacks the profile). Changes `spec`'s profiles.
[[nodiscard]] core::Status PerturbProfiles(const std::string& text, mig::GpuMigSpec* spec);

// The instances of `layout` (canonical text) as a driver would number them had it created them
// largest first: GPU instances 1, 2, ..., compute instances 0, 1, ... within each.
[[nodiscard]] core::Result<std::vector<gpu::MigGpuInstance>> InstancesOf(
    const mig::GpuMigSpec& spec, const std::string& layout);

// The state file: "gpu <index> mig <0|1>" per GPU, then per GPU instance
// "gi <gpu> <id> <profile id> <start> [<ci id>:<compute slices> ...]". Written whole to a
// temporary file and renamed, so a reader never sees half of it.
[[nodiscard]] core::Status SaveMigState(
    const std::string& path, const std::vector<std::unique_ptr<gpu::sim::SimDevice>>& devices);
// Restores every GPU the file names; false when there is no file (or it is empty).
[[nodiscard]] core::Result<bool> LoadMigState(
    const std::string& path, const std::vector<std::unique_ptr<gpu::sim::SimDevice>>& devices);

}  // namespace headroom::fake_nvml

#endif  // HEADROOM_TESTS_FAKE_NVML_FAKE_MIG_STATE_H_
