// GpuSpec and ServerSpec: what headroom knows of one GPU type and one server type, from public
// spec sheets (brief §5) plus the calibrated parameters of the power model. Loaded from
// data/hardware/*.yaml by catalog/. Plain value types, thread-compatible.
#ifndef HEADROOM_MODEL_GPU_SPEC_H_
#define HEADROOM_MODEL_GPU_SPEC_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "core/units.h"

namespace headroom::model {

// Power drawn by a GPU as a function of what its units are doing and of the SM clock f:
//   P = idle + (active_w * busy + sm_w * sm) * (f / f_max) * v(f)^2 + memory_w * mem
// where busy, sm and mem are the fractions of time a kernel runs, the SMs compute at full rate,
// and the memory system streams at full rate. v(f) is the voltage relative to its value at f_max:
// flat at `voltage_floor` up to `voltage_knee`, then rising linearly to 1 at f_max. Dynamic power
// thus falls faster than f near the top of the clock range (brief §5, standard DVFS reasoning).
struct PowerModelParams {
  double active_w = 0;  // clock-dependent power while any kernel runs (clock tree, leakage rise)
  double sm_w = 0;      // extra power with the SMs saturated, at f_max
  double memory_w = 0;  // power with the memory system saturated (independent of SM clock)
  double voltage_floor = 1.0;         // v below the knee, in (0, 1]
  core::Megahertz voltage_knee{0.0};  // clock above which voltage rises
};

// How the driver reports power and energy (nvml.md §5), which the simulated GPU reproduces.
struct SensorTraits {
  // True where NVML's classic power reading is a 1 s average (Hopper and newer, Ampere but GA100).
  bool classic_power_is_average = false;
  core::Duration instant_window{std::chrono::milliseconds(25)};   // sensor on for this long...
  core::Duration instant_period{std::chrono::milliseconds(100)};  // ...in every period
  core::Duration energy_update_period{std::chrono::milliseconds(100)};
};

// Firmware power-limit enforcement: a first-order lag of the clock toward the highest clock whose
// power fits under the limit. Time constants are inferred (nvml.md §5.6: "hundreds of ms").
struct LimiterTraits {
  core::Duration tau_down{std::chrono::milliseconds(200)};
  core::Duration tau_up{std::chrono::milliseconds(500)};
};

// Die temperature: first-order approach to ambient + power * c_per_w.
struct ThermalTraits {
  core::Celsius ambient{30.0};
  double c_per_w = 0.1;
  core::Duration tau{std::chrono::seconds(30)};
};

struct GpuSpec {
  std::string name;                  // canonical catalog name, e.g. "a100-80gb-sxm"
  std::vector<std::string> aliases;  // e.g. "a100-80gb"
  std::string nvml_name;             // as NVML reports it, e.g. "NVIDIA A100-SXM4-80GB"
  std::string architecture;          // "ampere", "hopper"

  core::Watts tdp{0};
  core::Watts power_limit_min{0};
  core::Watts power_limit_max{0};
  core::Watts power_limit_default{0};
  core::Watts idle_power{0};

  core::Megahertz sm_clock_min{0};
  core::Megahertz sm_clock_max{0};
  core::Megahertz sm_clock_base{0};
  core::Megahertz sm_clock_step{0};
  core::Megahertz sm_clock_idle{0};  // what an idle, unlocked GPU reports
  core::Megahertz brake_clock{0};    // SM clock under the power brake
  core::Megahertz memory_clock{0};

  std::uint64_t memory_bytes = 0;
  double memory_bandwidth_bytes_per_s = 0;
  double bf16_flops_per_s = 0;          // dense
  double fp16_flops_per_s = 0;          // dense
  double interconnect_bytes_per_s = 0;  // GPU-to-GPU, per direction (tensor-parallel traffic)
  int sm_count = 0;
  bool mig_supported = false;
  int mig_max_instances = 0;

  PowerModelParams power;
  SensorTraits sensor;
  LimiterTraits limiter;
  ThermalTraits thermal;

  // Supported SM clocks, highest first, on the step grid from sm_clock_min to sm_clock_max.
  std::vector<core::Megahertz> SupportedSmClocks() const;
  // The supported clock closest to `f`, within [sm_clock_min, sm_clock_max].
  core::Megahertz SnapClock(core::Megahertz f) const;
  // `mhz` as clocks of this GPU, each snapped to the grid; kOutOfRange naming the first outside
  // [sm_clock_min, sm_clock_max] and the range.
  [[nodiscard]] core::Result<std::vector<core::Megahertz>> ClocksInRange(
      std::span<const double> mhz) const;
  // `watts` as power limits; kOutOfRange naming the first outside the settable range.
  [[nodiscard]] core::Result<std::vector<core::Watts>> PowerLimitsInRange(
      std::span<const double> watts) const;
};

struct ServerSpec {
  std::string name;  // "dgx-a100"
  std::vector<std::string> aliases;
  std::string gpu;  // catalog name of its GPU type
  int gpus_per_server = 0;
  core::Watts non_gpu_power{0};  // CPUs, NICs, NVSwitches, fans at load (every GPU at TDP)
  // The same while every GPU idles; between the two it rises linearly with the GPUs' power
  // (NonGpuPower). Equal to non_gpu_power: a constant.
  core::Watts non_gpu_idle_power{0};
  core::Watts max_system_power{0};
};

// Watts of the rest of the server per watt its GPUs draw above idle: (non_gpu_power -
// non_gpu_idle_power) / (gpus_per_server x (tdp - idle power)); 0 when the GPU has no range.
double NonGpuSlope(const ServerSpec& server, const GpuSpec& gpu);
// The rest of the server while its GPUs draw `gpus` in all: its idle floor with every GPU idle,
// rising linearly to non_gpu_power with every GPU at TDP (and on beyond, as power conversion
// losses and fans do).
core::Watts NonGpuPower(const ServerSpec& server, const GpuSpec& gpu, core::Watts gpus);

}  // namespace headroom::model

#endif  // HEADROOM_MODEL_GPU_SPEC_H_
