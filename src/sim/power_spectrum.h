// PowerSpectrum: where a power series' swings lie in frequency. The one-sided power spectral
// density of the series' AC part (W^2/Hz), Welch-averaged over Hann-windowed segments, and the
// share, RMS and amplitude of the swing within a band (the grid's 0.1-2 Hz and 3-30 Hz). The FFT
// is KISS FFT's (Debian libkissfft-dev, BSD). Pure functions; thread-safe.
#ifndef HEADROOM_SIM_POWER_SPECTRUM_H_
#define HEADROOM_SIM_POWER_SPECTRUM_H_

#include <span>
#include <vector>

namespace headroom::sim {

struct Spectrum {
  double df_hz = 0;              // bin width: 1 / segment length in seconds
  std::vector<double> psd = {};  // W^2/Hz at k x df_hz, k = 0 .. segment/2 (k = 0 is 0)
  int segment = 0;               // samples per segment
  int segments = 0;              // averaged
  double variance() const;       // of the AC part: the PSD integrated over every bin
};

// Segments of at most this many samples (40.96 s at a 10 ms step: bins of 0.024 Hz, so 0.1 Hz
// is four bins above zero), or the largest power of two the series holds.
inline constexpr int kMaxSpectrumSegment = 4096;

// The Welch spectrum of `power_w` sampled every `step_s`: segments of kMaxSpectrumSegment samples
// (fewer for a short series) overlapping by half, each less its mean and Hann-windowed,
// periodograms averaged. Welch rather than one FFT of the whole series: a single periodogram's
// every bin is as noisy as one segment's however long the series, and a shift of an iteration's
// length by one step would move the bands' shares; averaging the segments steadies them, and
// 41 s segments resolve the 0.1 Hz edge. An empty spectrum for fewer than 16 samples.
// REQUIRES: step_s > 0.
Spectrum WelchSpectrum(std::span<const double> power_w, double step_s);

struct BandSwing {
  double lo_hz = 0;
  double hi_hz = 0;
  double share = 0;        // of the AC part's variance, in [0, 1]
  double rms_w = 0;        // of the swing within the band
  double amplitude_w = 0;  // of a sine with that RMS (sqrt 2 x rms): the swing's half height
};

// The part of the spectrum's variance in bins whose centre lies in [lo_hz, hi_hz]; hi_hz above
// the Nyquist frequency counts only the bins there are.
BandSwing Band(const Spectrum& spectrum, double lo_hz, double hi_hz);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_POWER_SPECTRUM_H_
