#include "telemetry/token_energy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>
#include <vector>

namespace headroom::telemetry {
namespace {

using Vec3 = std::array<double, 3>;
using Mat3 = std::array<Vec3, 3>;

double Det(const Mat3& m) {
  return m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) -
         m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0]) +
         m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0]);
}

// The inverse of a symmetric 3x3 matrix by its adjugate. Written here, not taken from a linear
// algebra package: three unknowns are all the fit has, and their closed form is a few lines.
Mat3 Inverse(const Mat3& m, double det) {
  Mat3 inv{};
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) {
      const int r1 = (c + 1) % 3, r2 = (c + 2) % 3, c1 = (r + 1) % 3, c2 = (r + 2) % 3;
      inv[r][c] = (m[r1][c1] * m[r2][c2] - m[r1][c2] * m[r2][c1]) / det;
    }
  }
  return inv;
}

// Least squares of y on three columns without an intercept, each column scaled by its largest
// value so that seconds and thousands of tokens weigh alike when deciding whether the windows
// tell the terms apart. ok false when they do not.
struct Ols3 {
  bool ok = false;
  Vec3 beta{0, 0, 0};  // in the columns' own units
  Mat3 cov{};          // of beta, in the columns' own units
};

Ols3 Solve(const std::vector<std::pair<Vec3, double>>& rows) {
  Ols3 out;
  Vec3 scale{0, 0, 0};
  for (const auto& [x, y] : rows) {
    for (int k = 0; k < 3; ++k) scale[k] = std::max(scale[k], x[k]);
  }
  if (scale[0] <= 0 || scale[1] <= 0 || scale[2] <= 0) return out;
  Mat3 xtx{};
  Vec3 xty{0, 0, 0};
  for (const auto& [raw, y] : rows) {
    Vec3 x = raw;
    for (int k = 0; k < 3; ++k) x[k] /= scale[k];
    for (int r = 0; r < 3; ++r) {
      xty[r] += x[r] * y;
      for (int c = 0; c < 3; ++c) xtx[r][c] += x[r] * x[c];
    }
  }
  const double n = static_cast<double>(rows.size());
  const double det = Det(xtx);
  if (!(std::abs(det) > 1e-9 * n * n * n)) return out;
  const Mat3 inv = Inverse(xtx, det);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) out.beta[r] += inv[r][c] * xty[c];
    out.beta[r] /= scale[r];
  }
  double rss = 0;
  for (const auto& [x, y] : rows) {
    double e = y;
    for (int k = 0; k < 3; ++k) e -= out.beta[k] * x[k];
    rss += e * e;
  }
  const double sigma2 = rss / std::max(1.0, n - 3);
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 3; ++c) out.cov[r][c] = sigma2 * inv[r][c] / (scale[r] * scale[c]);
  }
  out.ok = true;
  return out;
}

// A window's regressors: its length (for idle power), its prompt and its generated tokens.
Vec3 Row(const EnergyWindowSample& w) { return {w.seconds, w.prompt_tokens, w.generated_tokens}; }

}  // namespace

void TokenEnergyFit::Add(const EnergyWindowSample& w) {
  const bool sound = std::isfinite(w.seconds) && w.seconds > 0 && std::isfinite(w.energy_j) &&
                     w.energy_j >= 0 && std::isfinite(w.prompt_tokens) && w.prompt_tokens >= 0 &&
                     std::isfinite(w.generated_tokens) && w.generated_tokens >= 0;
  if (!sound) return;
  windows_.push_back(w);
  while (windows_.size() > max_windows_) windows_.pop_front();
}

std::optional<TokenEnergy> TokenEnergyFit::Fit() const {
  std::optional<TokenEnergy> fit = FitTerms();
  if (!fit) return fit;
  for (const EnergyWindowSample& w : windows_) {
    fit->over.seconds += w.seconds;
    fit->over.energy_j += w.energy_j;
    fit->over.prompt_tokens += w.prompt_tokens;
    fit->over.generated_tokens += w.generated_tokens;
    fit->over.iterations += w.iterations;
  }
  return fit;
}

std::optional<TokenEnergy> TokenEnergyFit::FitTerms() const {
  if (windows_.size() < 5) {
    why_ = "fewer than 5 windows";
    return std::nullopt;
  }
  double idle_j = 0;
  double idle_s = 0;
  int idle_windows = 0;
  for (const EnergyWindowSample& w : windows_) {
    if (w.prompt_tokens > 0 || w.generated_tokens > 0) continue;
    idle_j += w.energy_j;
    idle_s += w.seconds;
    ++idle_windows;
  }
  const bool steps = std::all_of(windows_.begin(), windows_.end(), [](const auto& w) {
    return w.iterations > 0 || (w.prompt_tokens == 0 && w.generated_tokens == 0);
  });
  const auto above = [&](double idle_w, const std::string& from) {
    std::optional<TokenEnergy> fit =
        steps ? FitAboveIdleWithSteps(idle_w, from) : FitAboveIdle(idle_w, from);
    return fit ? fit : Unsplit(idle_w, from);
  };
  if (idle_windows >= 5) return above(idle_j / idle_s, "token-free windows");
  if (rated_idle_w_) return above(*rated_idle_w_, "rated");
  return FitWithIdle();
}

std::optional<TokenEnergy> TokenEnergyFit::Unsplit(double idle_w, const std::string& from) const {
  // The energy above idle over the generated tokens, window by window for the spread: an engine
  // held at one load (a benchmark at saturation) never varies its mix, and the whole cost per
  // generated token, prompts' included, is still known (ML.ENERGY publishes exactly that).
  double above_j = 0;
  double generated = 0;
  std::vector<std::pair<double, double>> per_window;  // (J per generated token, tokens)
  for (const EnergyWindowSample& w : windows_) {
    const double y = w.energy_j - idle_w * w.seconds;
    above_j += y;
    generated += w.generated_tokens;
    if (w.generated_tokens > 0) per_window.emplace_back(y / w.generated_tokens, w.generated_tokens);
  }
  if (generated <= 0 || per_window.size() < 2) return std::nullopt;
  const double g = above_j / generated;
  // The token-weighted spread of the windows' ratios around it, as the error of a weighted mean.
  double ss = 0;
  double w2 = 0;
  for (const auto& [ratio, tokens] : per_window) {
    ss += tokens * (ratio - g) * (ratio - g);
    w2 += tokens * tokens;
  }
  const double n = static_cast<double>(per_window.size());
  const double variance = ss / generated * n / (n - 1) * w2 / (generated * generated);
  // why_ keeps the reason the costs were not split.
  return TokenEnergy{.j_per_prompt_token = 0,
                     .j_per_generated_token = g,
                     .idle_w = idle_w,
                     .j_per_generated_token_se = std::sqrt(std::max(0.0, variance)),
                     .windows = static_cast<int>(windows_.size()),
                     .idle_from = from,
                     .split = false};
}

std::optional<TokenEnergy> TokenEnergyFit::FitAboveIdle(double idle_w,
                                                        const std::string& from) const {
  // Least squares of the energy above idle on the two token counts (2x2 normal equations).
  double pp = 0, pg = 0, gg = 0, py = 0, gy = 0;
  for (const EnergyWindowSample& w : windows_) {
    const double y = w.energy_j - idle_w * w.seconds;
    pp += w.prompt_tokens * w.prompt_tokens;
    pg += w.prompt_tokens * w.generated_tokens;
    gg += w.generated_tokens * w.generated_tokens;
    py += w.prompt_tokens * y;
    gy += w.generated_tokens * y;
  }
  const double det = pp * gg - pg * pg;
  if (pp <= 0 || gg <= 0) {
    why_ = "no prompt or no generated tokens in the windows";
    return std::nullopt;
  }
  if (!(det > 1e-9 * pp * gg)) {
    why_ = "the windows' mixes of prefill and decode do not tell the two costs apart";
    return std::nullopt;
  }
  const double p = (gg * py - pg * gy) / det;
  const double g = (pp * gy - pg * py) / det;
  double rss = 0;
  for (const EnergyWindowSample& w : windows_) {
    const double e = w.energy_j - idle_w * w.seconds - p * w.prompt_tokens - g * w.generated_tokens;
    rss += e * e;
  }
  const double sigma2 = rss / static_cast<double>(windows_.size() - 2);
  why_.clear();
  return TokenEnergy{.j_per_prompt_token = p,
                     .j_per_generated_token = g,
                     .idle_w = idle_w,
                     .j_per_prompt_token_se = std::sqrt(std::max(0.0, sigma2 * gg / det)),
                     .j_per_generated_token_se = std::sqrt(std::max(0.0, sigma2 * pp / det)),
                     .idle_w_se = 0,
                     .windows = static_cast<int>(windows_.size()),
                     .idle_from = from};
}

std::optional<TokenEnergy> TokenEnergyFit::FitAboveIdleWithSteps(double idle_w,
                                                                 const std::string& from) const {
  std::vector<std::pair<Vec3, double>> rows;
  double generated = 0;
  double iterations = 0;
  for (const EnergyWindowSample& w : windows_) {
    rows.push_back(
        {{w.prompt_tokens, w.generated_tokens, w.iterations}, w.energy_j - idle_w * w.seconds});
    generated += w.generated_tokens;
    iterations += w.iterations;
  }
  const Ols3 f = Solve(rows);
  if (!f.ok || generated <= 0) {
    why_ = "the windows' mixes of prefill, decode and iterations do not tell the costs apart";
    return std::nullopt;
  }
  // An iteration's own cost (the weights read once for its batch) is decoding's: an iteration
  // that prefills runs the batch's decode step too. Spread over the tokens generated.
  const double c = iterations / generated;
  const double g_var = f.cov[1][1] + c * c * f.cov[2][2] + 2 * c * f.cov[1][2];
  why_.clear();
  return TokenEnergy{.j_per_prompt_token = f.beta[0],
                     .j_per_generated_token = f.beta[1] + c * f.beta[2],
                     .idle_w = idle_w,
                     .j_per_prompt_token_se = std::sqrt(std::max(0.0, f.cov[0][0])),
                     .j_per_generated_token_se = std::sqrt(std::max(0.0, g_var)),
                     .idle_w_se = 0,
                     .windows = static_cast<int>(windows_.size()),
                     .idle_from = from};
}

std::optional<TokenEnergy> TokenEnergyFit::FitWithIdle() const {
  std::vector<std::pair<Vec3, double>> rows;
  bool prompt = false;
  bool generated = false;
  for (const EnergyWindowSample& w : windows_) {
    rows.push_back({Row(w), w.energy_j});
    prompt = prompt || w.prompt_tokens > 0;
    generated = generated || w.generated_tokens > 0;
  }
  if (!prompt || !generated) {
    why_ = "no prompt or no generated tokens in the windows";
    return std::nullopt;
  }
  const Ols3 f = Solve(rows);
  if (!f.ok) {
    why_ = "the windows' mixes of prefill and decode do not tell the two costs apart";
    return std::nullopt;
  }
  const auto se = [&](int k) { return std::sqrt(std::max(0.0, f.cov[k][k])); };
  why_.clear();
  return TokenEnergy{.j_per_prompt_token = f.beta[1],
                     .j_per_generated_token = f.beta[2],
                     .idle_w = f.beta[0],
                     .j_per_prompt_token_se = se(1),
                     .j_per_generated_token_se = se(2),
                     .idle_w_se = se(0),
                     .windows = static_cast<int>(windows_.size())};
}

}  // namespace headroom::telemetry
