#include "sim/power_spectrum.h"

#include <cmath>
#include <memory>
#include <numbers>

#include <kiss_fftr.h>

namespace headroom::sim {
namespace {

constexpr int kMinSpectrumSamples = 16;

int SegmentLength(std::size_t samples) {
  int n = kMaxSpectrumSegment;
  while (n > kMinSpectrumSamples && static_cast<std::size_t>(n) > samples) n /= 2;
  return n;
}

struct KissFftrFree {
  void operator()(kiss_fftr_cfg cfg) const { kiss_fftr_free(cfg); }
};

// Adds one windowed segment's one-sided periodogram (unnormalized |X_k|^2) to `sum`.
void AddPeriodogram(std::span<const double> x, const std::vector<double>& window, kiss_fftr_cfg cfg,
                    std::vector<double>& sum) {
  const std::size_t n = x.size();
  double mean = 0;
  for (double v : x) mean += v;
  mean /= static_cast<double>(n);
  std::vector<kiss_fft_scalar> in(n);
  for (std::size_t i = 0; i < n; ++i) {
    in[i] = static_cast<kiss_fft_scalar>((x[i] - mean) * window[i]);
  }
  std::vector<kiss_fft_cpx> out(n / 2 + 1);
  kiss_fftr(cfg, in.data(), out.data());
  for (std::size_t k = 0; k < out.size(); ++k) {
    sum[k] += static_cast<double>(out[k].r) * out[k].r + static_cast<double>(out[k].i) * out[k].i;
  }
}

}  // namespace

double Spectrum::variance() const {
  double v = 0;
  for (double p : psd) v += p * df_hz;
  return v;
}

Spectrum WelchSpectrum(std::span<const double> power_w, double step_s) {
  Spectrum s;
  if (power_w.size() < static_cast<std::size_t>(kMinSpectrumSamples)) return s;
  const int n = SegmentLength(power_w.size());
  std::vector<double> window(n);
  double window_power = 0;  // mean of w^2, so the PSD integrates to the variance
  for (int i = 0; i < n; ++i) {
    window[i] = 0.5 - 0.5 * std::cos(2 * std::numbers::pi * i / n);
    window_power += window[i] * window[i] / n;
  }
  std::unique_ptr<kiss_fftr_state, KissFftrFree> cfg(kiss_fftr_alloc(n, 0, nullptr, nullptr));
  std::vector<double> sum(n / 2 + 1, 0.0);
  const std::size_t hop = n / 2;
  for (std::size_t begin = 0; begin + n <= power_w.size(); begin += hop) {
    AddPeriodogram(power_w.subspan(begin, n), window, cfg.get(), sum);
    ++s.segments;
  }
  s.segment = n;
  s.df_hz = 1.0 / (n * step_s);
  const double fs = 1.0 / step_s;
  s.psd.resize(sum.size());
  for (std::size_t k = 0; k < sum.size(); ++k) {
    // One-sided: the negative frequencies' half folded in, except at 0 and Nyquist.
    const double fold = (k == 0 || k == sum.size() - 1) ? 1.0 : 2.0;
    s.psd[k] = fold * sum[k] / (s.segments * fs * n * window_power);
  }
  s.psd[0] = 0;  // each segment's mean is removed: its residue is window leakage, not swing
  return s;
}

BandSwing Band(const Spectrum& spectrum, double lo_hz, double hi_hz) {
  BandSwing b{.lo_hz = lo_hz, .hi_hz = hi_hz};
  double in_band = 0;
  for (std::size_t k = 1; k < spectrum.psd.size(); ++k) {
    const double f = k * spectrum.df_hz;
    if (f >= lo_hz && f <= hi_hz) in_band += spectrum.psd[k] * spectrum.df_hz;
  }
  const double total = spectrum.variance();
  b.share = total > 0 ? in_band / total : 0;
  b.rms_w = std::sqrt(in_band);
  b.amplitude_w = std::sqrt(2.0) * b.rms_w;
  return b;
}

}  // namespace headroom::sim
