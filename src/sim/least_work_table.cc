#include "sim/least_work_table.h"

#include <cmath>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace headroom::sim {

LeastWorkTable::LeastWorkTable(std::size_t instances)
    : size_(instances),
      end_ns_(instances, 0.0),
      idle_((instances + kWordBits - 1) / kWordBits, 0),
      ending_(idle_.size(), 0),
      maybe_(idle_.size(), 0) {
  blocks_.resize((instances + kLanes - 1) / kLanes);
  // The padding has unbounded work and no run: never the least, never a bound's least.
  for (std::size_t k = instances; k < blocks_.size() * kLanes; ++k) {
    Field(&Block::outstanding, k) = std::numeric_limits<double>::infinity();
  }
  for (std::size_t k = 0; k < instances; ++k) MarkZeros(k, false);
}

void LeastWorkTable::Set(std::size_t k, const RouteState& state) {
  Block& b = blocks_[k / kLanes];
  const std::size_t j = k % kLanes;
  const bool decoding = state.steps > 1;
  const double steps = decoding ? static_cast<double>(state.steps) : 0;
  b.outstanding[j] = state.outstanding;
  b.running[j] = state.running;
  b.steps[j] = steps;
  b.start_ns[j] = state.start_ns;
  end_ns_[k] = state.end_ns;
  // Steps never shrink while the KV cache grows, so no more than elapsed / first step of them
  // fit in the time elapsed, and no fewer than elapsed / last step. A run whose steps shrink (no
  // growth in the cache's cost, rounded below zero) is bounded above by its length only.
  const bool bounded = decoding && state.step_growth_s >= 0 && state.first_step_s >= 1e-12;
  b.fast_per_ns[j] = bounded ? 1e-9 / state.first_step_s : 0;
  b.fast_margin[j] = bounded ? 3 : steps;
  const double longest = state.first_step_s + std::max(0.0, state.step_growth_s * (steps - 1));
  b.slow_per_ns[j] = decoding && std::isfinite(longest) && longest >= 1e-12 ? 1e-9 / longest : 0;
  MarkZeros(k, decoding);
}

void LeastWorkTable::SetOutstanding(std::size_t k, double outstanding) {
  blocks_[k / kLanes].outstanding[k % kLanes] = outstanding;
  MarkZeros(k, Field(&Block::steps, k) > 1);
}

double LeastWorkTable::Bound(double now_ns) {
  // The steps done by now n of a run have n x shortest <= elapsed < (n + 1) x longest up to a
  // few roundings, each far below a step: 3 steps of margin either way make both bounds safe.
  // A bound of fewer than 0 steps is as safe as 0 (no max to take).
  double least_most[kLanes];
  std::fill_n(least_most, kLanes, std::numeric_limits<double>::infinity());
  for (Block& b : blocks_) {
    for (std::size_t j = 0; j < kLanes; ++j) {
      const double elapsed = now_ns - b.start_ns[j];
      const double most_steps = std::min(b.steps[j], elapsed * b.fast_per_ns[j] + b.fast_margin[j]);
      const double least_steps = std::min(b.steps[j], elapsed * b.slow_per_ns[j] - 3);
      b.least[j] = b.outstanding[j] - b.running[j] * most_steps;
      least_most[j] = std::min(least_most[j], b.outstanding[j] - b.running[j] * least_steps);
    }
  }
  return *std::min_element(least_most, least_most + kLanes);
}

void LeastWorkTable::MarkMaybe(double least_most) {
  std::fill(maybe_.begin(), maybe_.end(), 0);
  static_assert(kWordBits % kLanes == 0);
  constexpr std::size_t kBlocksPerWord = kWordBits / kLanes;
  for (std::size_t i = 0; i < blocks_.size(); ++i) {
    const double* least = blocks_[i].least;
#if defined(__SSE2__)
    // Two compares and two sign masks a block: a quarter of the scalar form's instructions.
    const __m128d most = _mm_set1_pd(least_most);
    const auto bits = static_cast<std::uint64_t>(
        _mm_movemask_pd(_mm_cmple_pd(_mm_loadu_pd(least), most)) |
        _mm_movemask_pd(_mm_cmple_pd(_mm_loadu_pd(least + 2), most)) << 2);
#else
    std::uint64_t bits = 0;
    for (std::size_t j = 0; j < kLanes; ++j) {
      bits |= static_cast<std::uint64_t>(least[j] <= least_most) << j;
    }
#endif
    maybe_[i / kBlocksPerWord] |= bits << (i % kBlocksPerWord * kLanes);
  }
}

}  // namespace headroom::sim
