// TokenEnergy: what a token costs in joules on a live server (issue 51), from windows of its
// GPUs' energy (NVML's counters) and its engine's token counters. A window's energy is modelled
// as idle power over its length plus a cost per prompt token and per generated token, fitted by
// least squares over the recent windows, with the standard error of each: a batch's energy cannot
// be split between its requests from inside one window, but windows with different mixes of
// prefill and decode tell the two costs apart.
//
// Idle power is not left to the fit where it can be known: a busy engine's decode steps cost a
// share per step (the weights read once for the whole batch) that grows with time busy, not with
// tokens, and a free intercept takes it as "idle", leaving the generated tokens only their
// marginal cost (in the simulator, 2% of the energy each one causes on average). So the idle
// power is measured where the engine had no token in flight (five token-free windows or more),
// else taken as the GPUs' rated idle power when given, and only without either fitted; the costs
// per token are then fitted on the energy above it. Pure; thread-compatible.
#ifndef HEADROOM_TELEMETRY_TOKEN_ENERGY_H_
#define HEADROOM_TELEMETRY_TOKEN_ENERGY_H_

#include <cstddef>
#include <deque>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace headroom::telemetry {

// One window between two reads of the counters.
struct EnergyWindowSample {
  double seconds = 0;
  double energy_j = 0;
  double prompt_tokens = 0;
  double generated_tokens = 0;
  // The engine's iterations (steps) in it, where it counts them (vLLM: the count of
  // vllm:iteration_tokens_total); 0: not counted.
  double iterations = 0;
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
  // Where the idle power came from: "token-free windows", "rated", or "fitted".
  std::string idle_from = "fitted";
  // false: the windows did not tell prompt tokens from generated ones apart (an engine held at
  // one load), and j_per_generated_token is the whole energy above idle per generated token,
  // the prompts' share included (j_per_prompt_token 0, not known); TokenEnergyFit::why() says why.
  bool split = true;
  // The windows fitted, summed: what the costs apply to (energy per output token over them, all
  // in, is j_per_prompt_token x prompt + j_per_generated_token x generated + idle_w x seconds,
  // over generated).
  EnergyWindowSample over = {};

  // The GPUs' whole energy over the windows per generated token, idle included: what a token
  // costs as ML.ENERGY's leaderboard counts it. 0 without generated tokens.
  double AllIn() const {
    return over.generated_tokens > 0 ? over.energy_j / over.generated_tokens : 0;
  }
};

// The fit as the agent's /v1/state `token_energy`, `measure --json` and `simulate --json` write
// it: split, j_per_prompt_token (null unsplit), j_per_generated_token, idle_w, each with its
// `_stderr`, idle_from, windows, and all_in_j_per_generated_token (TokenEnergy::AllIn). Inline:
// report/ writes it without linking telemetry.
inline nlohmann::ordered_json TokenEnergyJson(const TokenEnergy& e) {
  const auto prompt = [&e](double v) { return e.split ? nlohmann::ordered_json(v) : nullptr; };
  return {{"split", e.split},
          {"j_per_prompt_token", prompt(e.j_per_prompt_token)},
          {"j_per_prompt_token_stderr", prompt(e.j_per_prompt_token_se)},
          {"j_per_generated_token", e.j_per_generated_token},
          {"j_per_generated_token_stderr", e.j_per_generated_token_se},
          {"idle_w", e.idle_w},
          {"idle_w_stderr", e.idle_w_se},
          {"idle_from", e.idle_from},
          {"windows", e.windows},
          {"all_in_j_per_generated_token", e.AllIn()}};
}

class TokenEnergyFit {
 public:
  // rated_idle_w: the GPUs' idle power from their specification, used when no window was free of
  // tokens (nullopt: fitted then).
  explicit TokenEnergyFit(std::size_t max_windows, std::optional<double> rated_idle_w = {})
      : max_windows_(max_windows), rated_idle_w_(rated_idle_w) {}

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
  std::optional<TokenEnergy> FitTerms() const;
  // Where the costs cannot be split but the idle power is known: TokenEnergy::split false.
  std::optional<TokenEnergy> Unsplit(double idle_w, const std::string& from) const;
  std::optional<TokenEnergy> FitWithIdle() const;
  std::optional<TokenEnergy> FitAboveIdle(double idle_w, const std::string& from) const;
  // With the engine's iterations counted in every window: their cost as a third term.
  std::optional<TokenEnergy> FitAboveIdleWithSteps(double idle_w, const std::string& from) const;

  std::size_t max_windows_;
  std::optional<double> rated_idle_w_;
  std::deque<EnergyWindowSample> windows_;
  mutable std::string why_;
};

}  // namespace headroom::telemetry

#endif  // HEADROOM_TELEMETRY_TOKEN_ENERGY_H_
