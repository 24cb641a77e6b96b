// Random draws by explicit inverse-transform sampling over std::mt19937_64, whose output the C++
// standard fixes: the same seed gives the same numbers with every compiler and library (the
// std::*_distribution classes are implementation-defined). Pure functions of the generator.
#ifndef HEADROOM_SIM_RANDOM_DRAWS_H_
#define HEADROOM_SIM_RANDOM_DRAWS_H_

#include <cmath>
#include <cstdint>
#include <random>

namespace headroom::sim {

// Uniform in [0, 1), from the top 53 bits of one draw.
inline double UniformDouble(std::mt19937_64& rng) {
  return static_cast<double>(rng() >> 11) * 0x1.0p-53;
}

// Exponential with the given rate (mean 1 / rate). REQUIRES: rate > 0.
inline double ExponentialDraw(std::mt19937_64& rng, double rate) {
  return -std::log1p(-UniformDouble(rng)) / rate;
}

// Uniform in [0, n). REQUIRES: 0 < n <= 2^53.
inline std::uint64_t UniformIndex(std::mt19937_64& rng, std::uint64_t n) {
  const auto i = static_cast<std::uint64_t>(UniformDouble(rng) * static_cast<double>(n));
  return i < n ? i : n - 1;
}

// One seed into independent-looking seeds for separate streams (SplitMix64 finalizer), so that
// e.g. the burst schedule does not change when the arrival stream draws more numbers.
inline std::uint64_t DeriveSeed(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ULL * (stream + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_RANDOM_DRAWS_H_
