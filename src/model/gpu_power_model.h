// GpuPowerModel: time and power of a phase of GPU work at a given SM clock, for one GPU type.
// A roofline for time (compute scales as 1/f, memory does not) and a DVFS model for power (see
// PowerModelParams). Pure: no I/O, no clock. Immutable after construction, so thread-safe.
#ifndef HEADROOM_MODEL_GPU_POWER_MODEL_H_
#define HEADROOM_MODEL_GPU_POWER_MODEL_H_

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/units.h"
#include "model/gpu_spec.h"

namespace headroom::model {

// Sharpness of the roofline's corner: time = (t_c^k + t_m^k)^(1/k). k = 4 costs ~19% at the
// ridge point and < 0.1% once one side is twice the other, the soft corner measured GEMM/GEMV
// sweeps show (inferred; the issue-4 fit of the llama2-70b profile refines efficiencies, not k).
inline constexpr double kRooflineSharpness = 4.0;

// A phase of work on one GPU: what it computes and moves, plus a fixed overhead.
struct Phase {
  double flops = 0;
  double bytes = 0;
  double overhead_s = 0;  // time that scales with neither clock nor bandwidth
  // How busy the SMs and memory are during the overhead (small kernels, launches, collectives),
  // as a fraction of their full-rate activity.
  double overhead_activity = 0;
  // Share of the overhead during which kernels are resident (the clock tree and leakage of an
  // active GPU); 0 for a GPU that truly idles while it waits (e.g. on a slow data-parallel peer).
  double overhead_busy = 1.0;
  // Time the GPU waits on the host with no kernel running (a serving process's per-step work):
  // scales with neither clock nor bandwidth. The GPU keeps its clocks through such millisecond
  // gaps, so it draws its idle power plus the clock tree's (counted as busy), but no SM or
  // memory activity.
  double host_wait_s = 0;
  double compute_efficiency = 1.0;  // achieved fraction of peak FLOP/s when compute-bound
  double memory_efficiency = 1.0;   // achieved fraction of peak bandwidth when memory-bound
};

// Fractions of wall time, each in [0, 1]: a kernel runs (busy), the SMs compute at full rate (sm),
// the memory system streams at full rate (mem). sm and mem never exceed busy.
struct Activity {
  double busy = 0;
  double sm = 0;
  double mem = 0;
};

struct PhaseTiming {
  double time_s = 0;
  Activity activity;  // while the phase runs (busy = 1)
};

// What time and power take of an SM clock, computed once for callers that time many phases at
// a few clocks (the row simulator): Time and Power at a ClockRates are those at its clock.
struct ClockRates {
  core::Megahertz clock{0};
  double flops_per_s = 0;    // peak bf16 FLOP/s at the clock
  double dynamic_scale = 0;  // GpuPowerModel::DynamicScale
};

class GpuPowerModel {
 public:
  explicit GpuPowerModel(GpuSpec spec);

  const GpuSpec& spec() const { return spec_; }

  // v(f) / v(f_max), in [voltage_floor, 1].
  double VoltageRatio(core::Megahertz f) const;
  // (f / f_max) * v(f)^2: how clock-dependent power scales.
  double DynamicScale(core::Megahertz f) const;

  ClockRates RatesAt(core::Megahertz f) const;
  // REQUIRES: f > 0.
  PhaseTiming Time(const Phase& phase, core::Megahertz f) const;
  PhaseTiming Time(const Phase& phase, const ClockRates& rates) const;
  core::Watts Power(const Activity& activity, core::Megahertz f) const;
  core::Watts Power(const Activity& activity, const ClockRates& rates) const;
  // Power while the phase runs `busy` of the time (and the GPU idles the rest).
  core::Watts PhasePower(const Phase& phase, core::Megahertz f, double busy = 1.0) const;

  // The highest supported clock <= ceiling whose PhasePower fits under `limit`; the lowest
  // supported clock when none does (the firmware cannot go lower).
  core::Megahertz MaxClockUnder(core::Watts limit, const Phase& phase, double busy,
                                core::Megahertz ceiling) const;

 private:
  GpuSpec spec_;
  // spec_.SupportedSmClocks(), highest first: MaxClockUnder searches it for every iteration of a
  // simulated instance under a power limit.
  std::vector<core::Megahertz> clocks_;
};

// Inline, where the row simulator times millions of steps (two per run of decode steps): its
// time goes to the latency of divisions and square roots, and the compiler overlaps two
// timings' chains only where it sees both.
inline PhaseTiming GpuPowerModel::Time(const Phase& phase, const ClockRates& rates) const {
  const double t_compute = phase.flops / (rates.flops_per_s * phase.compute_efficiency);
  const double t_memory =
      phase.bytes / (spec_.memory_bandwidth_bytes_per_s * phase.memory_efficiency);
  // (t_c^4 + t_m^4)^(1/4) by two square roots: the row simulator evaluates this millions of
  // times, and std::pow is several times slower.
  static_assert(kRooflineSharpness == 4.0);
  const double c2 = t_compute * t_compute;
  const double m2 = t_memory * t_memory;
  const double t_roof = std::sqrt(std::sqrt(c2 * c2 + m2 * m2));
  PhaseTiming timing;
  timing.time_s = phase.overhead_s + phase.host_wait_s + t_roof;
  if (timing.time_s <= 0) return timing;
  timing.activity.busy =
      (t_roof + phase.overhead_busy * phase.overhead_s + phase.host_wait_s) / timing.time_s;
  const double overhead_work = phase.overhead_activity * phase.overhead_s;
  timing.activity.sm = std::min(1.0, (t_compute + overhead_work) / timing.time_s);
  timing.activity.mem = std::min(1.0, (t_memory + overhead_work) / timing.time_s);
  return timing;
}

inline core::Watts GpuPowerModel::Power(const Activity& a, const ClockRates& rates) const {
  const PowerModelParams& p = spec_.power;
  const double clocked = (p.active_w * a.busy + p.sm_w * a.sm) * rates.dynamic_scale;
  return spec_.idle_power + core::Watts(clocked + p.memory_w * a.mem);
}

// Reference phases of a dense bf16 transformer, sized like one GPU's share of llama2-70b at
// tensor parallelism 8 (17.5 GB of weights). Arithmetic intensity is 2 FLOPs per 2-byte weight per
// token: prefill of 2048 tokens is compute-bound, a decode step of a batch of 16 memory-bound.
Phase PrefillLikePhase();
Phase DecodeLikePhase();

}  // namespace headroom::model

#endif  // HEADROOM_MODEL_GPU_POWER_MODEL_H_
