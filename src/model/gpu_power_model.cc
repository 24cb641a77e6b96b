#include "model/gpu_power_model.h"

#include <algorithm>
#include <cmath>

#include "core/check.h"

namespace headroom::model {
namespace {

// One GPU's share of llama2-70b weights at TP8: 70e9 parameters * 2 bytes / 8.
constexpr double kReferenceShardBytes = 17.5e9;
constexpr double kPrefillTokens = 2048;
constexpr double kDecodeBatch = 16;

}  // namespace

GpuPowerModel::GpuPowerModel(GpuSpec spec)
    : spec_(std::move(spec)), clocks_(spec_.SupportedSmClocks()) {
  HEADROOM_CHECK(spec_.sm_clock_max.value() > 0) << spec_.name;
  HEADROOM_CHECK(spec_.bf16_flops_per_s > 0 && spec_.memory_bandwidth_bytes_per_s > 0)
      << spec_.name;
}

double GpuPowerModel::VoltageRatio(core::Megahertz f) const {
  const PowerModelParams& p = spec_.power;
  const double f_max = spec_.sm_clock_max.value();
  const double knee = p.voltage_knee.value();
  if (f.value() <= knee || f_max <= knee) return p.voltage_floor;
  const double x = std::min(1.0, (f.value() - knee) / (f_max - knee));
  return p.voltage_floor + (1.0 - p.voltage_floor) * x;
}

double GpuPowerModel::DynamicScale(core::Megahertz f) const {
  const double v = VoltageRatio(f);
  return (f.value() / spec_.sm_clock_max.value()) * v * v;
}

ClockRates GpuPowerModel::RatesAt(core::Megahertz f) const {
  const double clock_ratio = f.value() / spec_.sm_clock_max.value();
  return {.clock = f,
          .flops_per_s = spec_.bf16_flops_per_s * clock_ratio,
          .dynamic_scale = DynamicScale(f)};
}

PhaseTiming GpuPowerModel::Time(const Phase& phase, core::Megahertz f) const {
  HEADROOM_CHECK(f.value() > 0) << "clock must be positive";
  return Time(phase, RatesAt(f));
}

core::Watts GpuPowerModel::Power(const Activity& a, core::Megahertz f) const {
  return Power(a, RatesAt(f));
}

core::Watts GpuPowerModel::PhasePower(const Phase& phase, core::Megahertz f, double busy) const {
  HEADROOM_CHECK(f.value() > 0) << "clock must be positive";
  const ClockRates rates = RatesAt(f);
  Activity a = Time(phase, rates).activity;
  a.busy *= busy;
  a.sm *= busy;
  a.mem *= busy;
  return Power(a, rates);
}

core::Megahertz GpuPowerModel::MaxClockUnder(core::Watts limit, const Phase& phase, double busy,
                                             core::Megahertz ceiling) const {
  const std::vector<core::Megahertz>& clocks = clocks_;  // highest first
  // Power rises monotonically with the clock, so the first clock that fits is the answer;
  // binary search over the descending grid.
  auto fits = [&](core::Megahertz f) { return PhasePower(phase, f, busy) <= limit; };
  size_t lo = 0, hi = clocks.size();  // answer in [lo, hi)
  while (lo < clocks.size() && clocks[lo] > ceiling) ++lo;
  if (lo == clocks.size()) return spec_.sm_clock_min;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (fits(clocks[mid])) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  return lo < clocks.size() ? clocks[lo] : spec_.sm_clock_min;
}

Phase PrefillLikePhase() {
  return Phase{.flops = kReferenceShardBytes * kPrefillTokens, .bytes = kReferenceShardBytes};
}

Phase DecodeLikePhase() {
  return Phase{.flops = kReferenceShardBytes * kDecodeBatch, .bytes = kReferenceShardBytes};
}

}  // namespace headroom::model
