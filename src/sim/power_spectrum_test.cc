#include "sim/power_spectrum.h"

#include <cmath>
#include <numbers>
#include <vector>

#include <gtest/gtest.h>

namespace headroom::sim {
namespace {

constexpr double kStep = 0.01;

std::vector<double> SquareWave(double hz, double seconds, double low_w, double high_w) {
  std::vector<double> p;
  for (int i = 0; i < static_cast<int>(seconds / kStep); ++i) {
    p.push_back(std::fmod(i * kStep * hz, 1.0) < 0.5 ? high_w : low_w);
  }
  return p;
}

TEST(PowerSpectrumTest, ASineIntegratesToItsVariance) {
  std::vector<double> p;
  for (int i = 0; i < 20'000; ++i)
    p.push_back(1000 + 100 * std::sin(2 * std::numbers::pi * i * kStep));
  const Spectrum s = WelchSpectrum(p, kStep);
  EXPECT_EQ(s.segment, kMaxSpectrumSegment);
  EXPECT_GT(s.segments, 5);
  EXPECT_NEAR(s.variance(), 100 * 100 / 2.0, 0.02 * 5000);
  const BandSwing low = Band(s, 0.1, 2);
  EXPECT_GT(low.share, 0.99);
  EXPECT_NEAR(low.amplitude_w, 100, 2);
}

// A square wave's fundamental carries 8/pi^2 (81%) of its variance, its third harmonic 1/9 of
// that: each lands in the band of its frequency.
TEST(PowerSpectrumTest, ASquareWavesEnergyLandsInTheBandOfItsFrequency) {
  const Spectrum slow = WelchSpectrum(SquareWave(0.5, 200, 200e3, 300e3), kStep);
  // 0.5 and 1.5 Hz: 8/pi^2 x (1 + 1/9) of the variance.
  EXPECT_NEAR(Band(slow, 0.1, 2).share, 8 / (std::numbers::pi * std::numbers::pi) * 10 / 9, 0.02);
  EXPECT_LT(Band(slow, 3, 30).share, 0.08);  // from the 7th harmonic, 3.5 Hz
  const Spectrum fast = WelchSpectrum(SquareWave(5, 200, 200e3, 300e3), kStep);
  EXPECT_LT(Band(fast, 0.1, 2).share, 0.01);
  EXPECT_GT(Band(fast, 3, 30).share, 0.85);  // 5, 15 and 25 Hz: 93% of the variance
  EXPECT_NEAR(Band(fast, 3, 30).rms_w, 50e3 * std::sqrt(0.93), 2e3);
}

TEST(PowerSpectrumTest, AFlatOrTinySeriesHasNoSwing) {
  const Spectrum flat = WelchSpectrum(std::vector<double>(5000, 1e5), kStep);
  EXPECT_EQ(Band(flat, 0.1, 2).share, 0);
  EXPECT_NEAR(Band(flat, 0.1, 2).rms_w, 0, 1e-3);
  EXPECT_TRUE(WelchSpectrum(std::vector<double>(8, 1.0), kStep).psd.empty());
}

}  // namespace
}  // namespace headroom::sim
