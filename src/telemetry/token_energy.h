// TokenEnergy: what a token costs in joules on a live server (issue 51), from windows of its
// GPUs' energy (NVML's counters) and its engine's token counters. A window's energy is modelled
// as idle power over its length plus a cost per prompt token and per generated token, fitted by
// least squares over the recent windows, with the standard error of each: a batch's energy cannot
// be split between its requests from inside one window, but windows with different mixes of
// prefill and decode tell the two costs apart. Pure; thread-compatible.
#ifndef HEADROOM_TELEMETRY_TOKEN_ENERGY_H_
#define HEADROOM_TELEMETRY_TOKEN_ENERGY_H_

#include <cstddef>
#include <deque>
#include <optional>
#include <string>

namespace headroom::telemetry {

// One window between two reads of the counters.
struct EnergyWindowSample {
  double seconds = 0;
  double energy_j = 0;
  double prompt_tokens = 0;
  double generated_tokens = 0;
};

struct TokenEnergy {
  double j_per_prompt_token = 0;
  double j_per_generated_token = 0;
  double idle_w = 0;
  // Standard errors of the three, from the residuals: the attribution's own error.
  double j_per_prompt_token_se = 0;
  double j_per_generated_token_se = 0;
  double idle_w_se = 0;
  int windows = 0;
};

class TokenEnergyFit {
 public:
  explicit TokenEnergyFit(std::size_t max_windows) : max_windows_(max_windows) {}

  // A window whose length is not positive or whose figures are negative or not finite is not
  // kept (a counter reset, a failed read): the fit never rests on a window it cannot trust.
  void Add(const EnergyWindowSample& w);
  // The fit over the kept windows; nullopt, with why(), when there are fewer than five or their
  // mixes do not tell the three terms apart (no prefill, or prefill always in one proportion to
  // decode).
  std::optional<TokenEnergy> Fit() const;
  const std::string& why() const { return why_; }
  std::size_t windows() const { return windows_.size(); }

 private:
  std::size_t max_windows_;
  std::deque<EnergyWindowSample> windows_;
  mutable std::string why_;
};

}  // namespace headroom::telemetry

#endif  // HEADROOM_TELEMETRY_TOKEN_ENERGY_H_
