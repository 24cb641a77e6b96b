// Device: the one interface through which headroom reads and controls a GPU, whatever the
// backend (NVML, simulated). Reads and controls a device lacks return a kUnimplemented error,
// never throw. Values are in SI units (W, J, MHz, bytes, degrees C); vendor units stay inside
// the backends. Implementations are thread-safe: a sampler thread and a control path may call
// one Device concurrently.
#ifndef HEADROOM_GPU_DEVICE_H_
#define HEADROOM_GPU_DEVICE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/units.h"

namespace headroom::gpu {

// Why the clocks are below their maximum. The bit values are NVML's clocks-event reasons, which
// every tool in this space shows, so they are kept rather than renumbered.
enum ThrottleReason : std::uint64_t {
  kThrottleGpuIdle = 0x1,
  kThrottleClockSetting = 0x2,  // a clock lock or application clocks
  kThrottleSwPowerCap = 0x4,    // the power limit is being enforced
  kThrottleHwSlowdown = 0x8,
  kThrottleSwThermal = 0x20,
  kThrottleHwThermal = 0x40,
  kThrottleHwPowerBrake = 0x80,
};
// "idle|power_cap" style names of the set bits; "none" when no bit is set.
std::string ThrottleReasonNames(std::uint64_t reasons);

// Facts about a device that do not change while it runs, probed once.
struct DeviceInfo {
  int index = 0;
  std::string name;  // as the driver reports it, e.g. "NVIDIA A100-SXM4-80GB"
  std::string uuid;
  std::string pci_bus_id;
  std::optional<std::string> catalog_type;  // e.g. "a100-80gb-sxm" when known
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<core::Megahertz> sm_clock_max;
  std::optional<core::Megahertz> memory_clock_max;
};

struct PowerLimitState {
  core::Watts min{0};  // settable range
  core::Watts max{0};
  core::Watts default_limit{0};  // the factory limit (TDP on data-center parts)
  core::Watts requested{0};      // what a user (or we) set in-band
  core::Watts enforced{0};       // the lowest of all limiters, out-of-band caps included
};

struct UtilizationRates {
  double gpu_percent = 0;     // time a kernel ran, over the driver's sample period
  double memory_percent = 0;  // time memory was read or written
};

struct MemoryUsage {
  std::uint64_t used_bytes = 0;
  std::uint64_t total_bytes = 0;
};

// One entry of the driver's own power sample ring (nvml.md §5.5). The timestamp is in the
// device's time base (microseconds, increasing), only comparable with the same device's.
struct PowerSample {
  std::uint64_t timestamp_us = 0;
  core::Watts power{0};
};

// The SM clock lock in force, if any.
struct ClockLock {
  core::Megahertz min{0};
  core::Megahertz max{0};
};

// MIG mode now, and after the next GPU reset (changing it needs root and may need a reset).
struct MigModeState {
  bool current = false;
  bool pending = false;
};

// One compute instance of a MIG GPU instance: what CUDA sees as one device.
struct MigComputeInstance {
  int id = 0;              // the driver's id, unique within its GPU instance
  int compute_slices = 0;  // SM slices (1/7 of the MIG-usable SMs each)
  int sm_count = 0;        // 0 when unknown
  std::string uuid = {};   // its MIG device UUID ("MIG-..."); empty when unknown
};

// One MIG GPU instance: a placement of memory slices with its compute instances.
struct MigGpuInstance {
  int id = 0;          // the driver's id, unique on the GPU
  int profile_id = 0;  // NVML GPU-instance profile ID (`nvidia-smi mig -lgip` "ID"), e.g. 9 for 3g
  int start = 0;       // first memory slice of the placement
  int size = 0;        // memory slices of the placement
  int sm_count = 0;    // 0 when unknown
  std::uint64_t memory_bytes = 0;  // 0 when unknown
  std::vector<MigComputeInstance> compute_instances = {};
};

// One placement a GPU-instance profile allows: its first memory slice and how many it spans.
struct MigPlacement {
  int start = 0;
  int size = 0;
};

// One GPU-instance profile as the driver describes it (`nvidia-smi mig -lgip` and `-lgipp`).
struct MigProfileInfo {
  int nvml_profile = 0;   // the NVML_GPU_INSTANCE_PROFILE_* value it answered to, e.g. 0x2
  int id = 0;             // the profile ID to create with (`-lgip` "ID"), e.g. 9 for a 3g
  std::string name = {};  // the driver's name ("MIG 3g.40gb"); empty when it gives none
  int slices = 0;         // compute (SM) slices
  int max_instances = 0;  // instances of this profile one GPU can hold
  int sm_count = 0;
  std::uint64_t memory_bytes = 0;
  int copy_engines = 0;
  int decoders = 0;
  int encoders = 0;
  int jpeg = 0;
  int ofa = 0;
  std::vector<MigPlacement> placements = {};  // ascending by start
};

// A compute process using the GPU (any of its MIG instances included).
struct GpuProcess {
  std::uint32_t pid = 0;
  std::optional<std::uint64_t> used_memory_bytes = {};  // absent when the driver hides it
  std::optional<int> gpu_instance_id = {};              // on a MIG GPU, where it runs
};

// One power-smoothing preset profile (Blackwell and later): a power floor the GPU holds while
// smoothing is on, and how fast its power may rise and fall (nvml.md, NVML_FI_PWR_SMOOTHING_*).
struct PowerSmoothingProfile {
  double floor_percent = 0;            // % of the GPU's total module power (TDP)
  double ramp_up_w_per_s = 0;          // fastest rise of the power
  double ramp_down_w_per_s = 0;        // fastest fall of the power
  double ramp_down_hysteresis_ms = 0;  // how long a drop waits before the ramp down starts
  bool operator==(const PowerSmoothingProfile&) const = default;
};

// A change to some parameters of one profile; the others keep their values.
struct PowerSmoothingUpdate {
  std::optional<double> floor_percent = {};
  std::optional<double> ramp_up_w_per_s = {};
  std::optional<double> ramp_down_w_per_s = {};
  std::optional<double> ramp_down_hysteresis_ms = {};
  bool empty() const {
    return !floor_percent && !ramp_up_w_per_s && !ramp_down_w_per_s && !ramp_down_hysteresis_ms;
  }
};

// The power-smoothing state of a GPU that has the feature.
struct PowerSmoothingState {
  bool enabled = false;
  int active_profile = 0;
  std::optional<core::Watts> applied_floor = {};          // the floor in force now
  std::optional<double> lifetime_remaining_percent = {};  // of the smoothing circuitry
  std::vector<PowerSmoothingProfile> profiles = {};       // every preset, by profile id
};

class Device {
 public:
  virtual ~Device() = default;

  virtual const DeviceInfo& info() const = 0;

  // Power now (the driver's most recent sensor window) and averaged over the last second.
  [[nodiscard]] virtual core::Result<core::Watts> PowerInstant() = 0;
  [[nodiscard]] virtual core::Result<core::Watts> PowerAverage() = 0;
  // Cumulative energy since the driver loaded. It updates in steps (every 20-100 ms on real
  // GPUs), so short windows can read zero change.
  [[nodiscard]] virtual core::Result<core::Joules> EnergyCounter() = 0;
  // The driver's power samples newer than `after_us` (0: all it holds), oldest first: sub-second
  // history even when polled once a second.
  [[nodiscard]] virtual core::Result<std::vector<PowerSample>> PowerSamples(
      std::uint64_t after_us) = 0;
  [[nodiscard]] virtual core::Result<core::Megahertz> SmClock() = 0;
  [[nodiscard]] virtual core::Result<core::Megahertz> MemoryClock() = 0;
  [[nodiscard]] virtual core::Result<std::vector<core::Megahertz>> SupportedSmClocks() = 0;
  [[nodiscard]] virtual core::Result<UtilizationRates> Utilization() = 0;
  [[nodiscard]] virtual core::Result<core::Celsius> Temperature() = 0;
  [[nodiscard]] virtual core::Result<MemoryUsage> Memory() = 0;
  [[nodiscard]] virtual core::Result<PowerLimitState> PowerLimits() = 0;
  [[nodiscard]] virtual core::Result<std::uint64_t> ThrottleReasons() = 0;
  // The clock lock set through this interface or found at start; nullopt when unlocked.
  [[nodiscard]] virtual core::Result<std::optional<ClockLock>> SmClockLock() = 0;

  // Controls. Out-of-range values are kOutOfRange errors and change nothing.
  [[nodiscard]] virtual core::Status SetPowerLimit(core::Watts limit) = 0;
  [[nodiscard]] virtual core::Status ResetPowerLimit() = 0;
  [[nodiscard]] virtual core::Status LockSmClocks(core::Megahertz min, core::Megahertz max) = 0;
  [[nodiscard]] virtual core::Status ResetSmClocks() = 0;

  // MIG. A GPU without MIG, a backend without it, or MIG mode off: kUnimplemented. Creating and
  // destroying needs root (kPermissionDenied); no room for a placement is kResourceExhausted;
  // destroying what a process still uses is kFailedPrecondition. These defaults serve backends
  // without MIG.
  [[nodiscard]] virtual core::Result<MigModeState> MigMode();
  // Turns MIG mode on or off (root). Returns the mode after the call: `pending` differs from
  // `current` when the change waits for a GPU reset, which headroom never performs. Turning it
  // off while GPU instances exist is kFailedPrecondition.
  [[nodiscard]] virtual core::Result<MigModeState> SetMigMode(bool enabled);
  // Every GPU instance with its compute instances, by GPU-instance id.
  [[nodiscard]] virtual core::Result<std::vector<MigGpuInstance>> MigInstances();
  // Creates a GPU instance of `profile_id` at memory slice `start`; returns its id.
  [[nodiscard]] virtual core::Result<int> CreateGpuInstance(int profile_id, int start);
  // Creates a compute instance of `compute_slices` SM slices in a GPU instance; returns its id.
  [[nodiscard]] virtual core::Result<int> CreateComputeInstance(int gpu_instance_id,
                                                                int compute_slices);
  [[nodiscard]] virtual core::Status DestroyComputeInstance(int gpu_instance_id,
                                                            int compute_instance_id);
  // REQUIRES: the GPU instance has no compute instances left (else kFailedPrecondition).
  [[nodiscard]] virtual core::Status DestroyGpuInstance(int gpu_instance_id);
  // The GPU-instance profiles the driver offers, with their possible placements, by NVML
  // profile value. Read-only; works with MIG mode off where the driver answers then (R580 on
  // H200 does). A GPU or backend without MIG: kUnimplemented.
  [[nodiscard]] virtual core::Result<std::vector<MigProfileInfo>> MigProfiles();
  // The compute processes running on the GPU now.
  [[nodiscard]] virtual core::Result<std::vector<GpuProcess>> RunningProcesses();

  // Power smoothing (Blackwell and later, through NVML). A GPU, driver or backend without it:
  // kUnimplemented, saying so; these defaults serve backends without it. Setting needs root
  // (kPermissionDenied); a profile id or value outside the GPU's range is kOutOfRange.
  [[nodiscard]] virtual core::Result<PowerSmoothingState> PowerSmoothing();
  [[nodiscard]] virtual core::Status SetPowerSmoothingEnabled(bool enabled);
  [[nodiscard]] virtual core::Status ActivatePowerSmoothingProfile(int profile);
  [[nodiscard]] virtual core::Status UpdatePowerSmoothingProfile(
      int profile, const PowerSmoothingUpdate& update);
};

}  // namespace headroom::gpu

#endif  // HEADROOM_GPU_DEVICE_H_
