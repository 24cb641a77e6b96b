#include "policy/energy_saver.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "core/parse.h"

namespace headroom::policy {

std::vector<core::Megahertz> EnergySaverClocks(const model::GpuSpec& spec, double floor,
                                               double step) {
  const double max = spec.sm_clock_max.value();
  const double lowest = std::max(spec.sm_clock_min.value(), floor * max);
  std::vector<core::Megahertz> clocks;
  for (int k = 0; max * (1 - k * step) >= lowest - 1e-9; ++k) {
    const core::Megahertz f = spec.SnapClock(core::Megahertz(max * (1 - k * step)));
    if (clocks.empty() || f < clocks.back()) clocks.push_back(f);
  }
  return clocks;
}

ClockChoice UnderRowCap(core::Megahertz saver, std::optional<core::Megahertz> row_cap) {
  const bool wins = row_cap && *row_cap < saver;
  return {.saver = saver, .applied = wins ? *row_cap : saver, .row_cap_wins = wins};
}

core::Result<EnergySaver> EnergySaver::Make(EnergySaverSettings settings) {
  const auto bad = [](std::string why) {
    return core::Fail(core::Error::InvalidArgument("energy-saver: " + why));
  };
  if (settings.clocks.empty()) return bad("clocks: give at least one");
  for (std::size_t k = 0; k < settings.clocks.size(); ++k) {
    if (!(settings.clocks[k].value() > 0)) {
      return bad(fmt::format("clocks: {} MHz is not positive", settings.clocks[k].value()));
    }
    if (k > 0 && !(settings.clocks[k] < settings.clocks[k - 1])) {
      return bad("clocks: give them highest first, each lower than the one before");
    }
  }
  if (!(settings.itl_p50_slo_s > 0)) return bad("itl_p50_slo must be above 0");
  if (!(settings.ttft_p99_slo_s > 0)) return bad("ttft_p99_slo must be above 0");
  if (!(settings.margin >= 0 && settings.margin < 1)) return bad("margin must be in [0, 1)");
  for (const auto& [name, d] :
       {std::pair{"stale_after", settings.stale_after}, std::pair{"settle", settings.settle},
        std::pair{"breach_memory", settings.breach_memory}}) {
    if (d < core::Duration::zero()) return bad(fmt::format("{} must not be negative", name));
  }
  return EnergySaver(std::move(settings));
}

EnergySaverSettings WithPrefillAtTopClock(EnergySaverSettings settings) {
  // A breach there would only raise the decode clock, which helps the first token little; and a
  // server's P99 over minutes strays above a bound of a few percent of the week's P99 with no
  // clock lowered at all.
  settings.ttft_p99_slo_s = std::numeric_limits<double>::infinity();
  return settings;
}

std::string EnergySaver::Distrust(core::Duration now,
                                  const std::optional<LatencyWindow>& window) const {
  if (!window) return "no engine metrics yet";
  if (!window->invalid.empty()) return "engine metrics unusable: " + window->invalid;
  if (now - window->at > settings_.stale_after) {
    return fmt::format("engine metrics stale: the last window ended {} ago",
                       core::FormatDuration(now - window->at));
  }
  return "";
}

std::string EnergySaver::Breach(const LatencyWindow& w) const {
  if (w.itl_p50_s && *w.itl_p50_s > settings_.itl_p50_slo_s) {
    return fmt::format("ITL P50 {:.1f} ms above its SLO {:.1f} ms", *w.itl_p50_s * 1e3,
                       settings_.itl_p50_slo_s * 1e3);
  }
  if (w.ttft_p99_s && *w.ttft_p99_s > settings_.ttft_p99_slo_s) {
    return fmt::format("TTFT P99 {:.0f} ms above its SLO {:.0f} ms", *w.ttft_p99_s * 1e3,
                       settings_.ttft_p99_slo_s * 1e3);
  }
  return "";
}

// Slack needs the inter-token latency seen: an idle window says nothing about a lower clock.
bool EnergySaver::Slack(const LatencyWindow& w) const {
  const double keep = 1 - settings_.margin;
  return w.itl_p50_s && *w.itl_p50_s <= settings_.itl_p50_slo_s * keep &&
         (!w.ttft_p99_s || *w.ttft_p99_s <= settings_.ttft_p99_slo_s * keep);
}

std::size_t EnergySaver::LowestAllowed(core::Duration now) const {
  const std::size_t lowest = settings_.clocks.size() - 1;
  if (!breach_at_ || now - *breach_at_ >= settings_.breach_memory || breach_level_ == 0) {
    return lowest;
  }
  return std::min(lowest, breach_level_ - 1);
}

ClockChoice EnergySaver::Step(core::Duration now, const std::optional<LatencyWindow>& window,
                              std::optional<core::Megahertz> row_cap) {
  const std::size_t before = level_;
  std::string reason;
  SaverVerdict verdict = SaverVerdict::kHolding;
  if (std::string why = Distrust(now, window); !why.empty()) {
    level_ = 0;
    verdict = SaverVerdict::kNoSignal;
    reason = why + ": the highest clock";
  } else if (std::string breach = Breach(*window); !breach.empty()) {
    if (level_ > 0) {
      breach_at_ = now;
      breach_level_ = level_;
    }
    level_ = 0;
    verdict = SaverVerdict::kBreach;
    reason = breach + ": the highest clock at once";
  } else if (Slack(*window) && level_ < LowestAllowed(now) &&
             (!last_change_ || now - *last_change_ >= settings_.settle)) {
    ++level_;
    verdict = SaverVerdict::kSlack;
    reason = "latencies within their SLO with the margin: one clock lower";
  } else {
    reason = "holding";
  }
  ClockChoice out = UnderRowCap(clock(), row_cap);
  out.changed = level_ != before;
  if (out.changed) last_change_ = now;
  out.verdict = verdict;
  out.reason = std::move(reason);
  return out;
}

}  // namespace headroom::policy
