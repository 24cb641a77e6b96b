// TokenEnergyMeter: the windows a TokenEnergyFit is fitted on, formed from consecutive reads of a
// server's GPU energy (the sum of its counters) and its engine's token counters (issue 51): the
// node agent reads them at each engine scrape, `headroom measure --engine-metrics` at each of its
// own. A failed read drops the window across it; a counter that went down (a GPU or engine reset)
// gives a window the fit refuses. Pure; thread-compatible.
#ifndef HEADROOM_TELEMETRY_TOKEN_ENERGY_METER_H_
#define HEADROOM_TELEMETRY_TOKEN_ENERGY_METER_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "core/units.h"
#include "gpu/device.h"
#include "telemetry/token_energy.h"

namespace headroom::telemetry {

// Recent windows the agent keeps for the fit (issue 51's brief: e.g. the last 60): at its default
// 10 s scrape the last 10 minutes, long enough for the mix of prefill and decode to vary, short
// enough to follow a change of model or clock; not tuned by measurement yet.
inline constexpr std::size_t kTokenEnergyWindows = 60;

// A server's GPUs' energy counters, summed: a read's energy. The first counter that cannot be
// read fails it, naming the GPU.
[[nodiscard]] core::Result<core::Joules> SummedEnergy(const std::vector<gpu::Device*>& devices);

// One read of the counters.
struct TokenEnergyRead {
  core::TimePoint at{};
  core::Joules energy{0};  // the server's GPUs' energy counters, summed
  double prompt_tokens = 0;
  double generated_tokens = 0;
  double iterations = 0;  // the engine's steps, where it counts them (0: not counted)
};

class TokenEnergyMeter {
 public:
  // rated_idle_w: the GPUs' idle power from their specification, summed (TokenEnergyFit's).
  explicit TokenEnergyMeter(std::size_t max_windows = kTokenEnergyWindows,
                            std::optional<double> rated_idle_w = {})
      : fit_(max_windows, rated_idle_w) {}

  // A good read: the window since the previous good read (if any, and later) goes to the fit.
  void Add(const TokenEnergyRead& read);
  // A failed read (the engine down, an energy counter unreadable): no window spans it.
  void Drop() { last_.reset(); }

  std::optional<TokenEnergy> Fit() const { return fit_.Fit(); }
  // Why Fit() has nothing (valid after a Fit() that returned nullopt).
  const std::string& why() const { return fit_.why(); }
  std::size_t windows() const { return fit_.windows(); }
  // Windows offered to the fit, including those it refused.
  std::size_t offered() const { return offered_; }

 private:
  TokenEnergyFit fit_;
  std::optional<TokenEnergyRead> last_;
  std::size_t offered_ = 0;
};

}  // namespace headroom::telemetry

#endif  // HEADROOM_TELEMETRY_TOKEN_ENERGY_METER_H_
