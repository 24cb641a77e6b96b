// The node agent's energy saver and its live J/token (issue 51): the part of Agent (agent.h) that
// steps policy::EnergySaver on the engine's latencies and fits telemetry::TokenEnergyFit on its
// GPUs' energy and the engine's token counters.
#include <algorithm>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "service/agent.h"
#include "telemetry/prometheus_text.h"

namespace headroom::service {
namespace {

using nlohmann::ordered_json;

// The reason's kind, a label of few values for /metrics (the reason itself, with its figures,
// is in /v1/state); no step yet counts as no signal.
std::string ReasonKind(const std::optional<policy::ClockChoice>& choice, bool paused) {
  if (paused) return "paused";
  switch (choice ? choice->verdict : policy::SaverVerdict::kNoSignal) {
    case policy::SaverVerdict::kSlack:
      return "slack";
    case policy::SaverVerdict::kHolding:
      return "holding";
    case policy::SaverVerdict::kBreach:
      return "breach";
    case policy::SaverVerdict::kNoSignal:
      break;
  }
  return "no_signal";  // missing, invalid or stale: the highest clock
}

// The simulator's ladder for `spec`, each clock moved to the highest the GPU supports at or below
// it (a driver's list is the catalog's grid in practice; this only guards against one that is
// not), duplicates dropped: highest first, strictly descending.
core::Result<std::vector<core::Megahertz>> SupportedLadder(
    const model::GpuSpec& spec, const std::vector<core::Megahertz>& supported,
    const EnergySaverOptions& options) {
  std::vector<core::Megahertz> ladder;
  for (core::Megahertz want :
       policy::EnergySaverClocks(spec, options.floor_share, options.step_share)) {
    std::optional<core::Megahertz> best;
    for (core::Megahertz f : supported) {
      if (f >= spec.sm_clock_min && f.value() <= want.value() + 0.5 && (!best || f > *best)) {
        best = f;
      }
    }
    if (best && (ladder.empty() || *best < ladder.back())) ladder.push_back(*best);
  }
  if (ladder.empty()) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("energy saver: the GPU supports no SM clock of the {} ladder ({}-{} MHz)",
                    spec.name, spec.sm_clock_min.value(), spec.sm_clock_max.value())));
  }
  return ladder;
}

}  // namespace

core::Result<std::optional<policy::EnergySaverSettings>> EnergySaverSettingsFor(
    const std::vector<AgentGpu>& gpus, const std::optional<EnergySaverOptions>& options) {
  if (!options) return std::optional<policy::EnergySaverSettings>();
  if (gpus.empty()) {
    return core::Fail(core::Error::InvalidArgument("energy saver: the server has no GPU"));
  }
  for (const AgentGpu& g : gpus) {
    if (g.spec.name != gpus.front().spec.name) {
      return core::Fail(core::Error::InvalidArgument(fmt::format(
          "energy saver: GPU {} is a {} but GPU {} a {}: the saver steps one clock ladder for "
          "the whole server (choose the GPUs of one type with --gpus)",
          g.device->info().index, g.spec.name, gpus.front().device->info().index,
          gpus.front().spec.name)));
    }
  }
  gpu::Device& first = *gpus.front().device;
  auto supported = first.SupportedSmClocks();
  if (!supported) {
    return core::Fail(supported.error().WithContext(
        fmt::format("energy saver: GPU {}'s supported SM clocks", first.info().index)));
  }
  HEADROOM_ASSIGN_OR_RETURN(std::vector<core::Megahertz> clocks,
                            SupportedLadder(gpus.front().spec, *supported, *options));
  policy::EnergySaverSettings settings{.clocks = std::move(clocks),
                                       .itl_p50_slo_s = options->itl_p50_slo_s,
                                       .ttft_p99_slo_s = options->ttft_p99_slo_s,
                                       .margin = options->margin,
                                       .stale_after = options->stale_after,
                                       .settle = options->settle};
  if (options->prefill_boost) settings = policy::WithPrefillAtTopClock(std::move(settings));
  HEADROOM_RETURN_IF_ERROR(policy::EnergySaver::Make(settings));
  return std::optional<policy::EnergySaverSettings>(std::move(settings));
}

bool Agent::SaverActive() const { return saver_ && !saver_paused_ && !stopped_; }

std::optional<core::Megahertz> Agent::SaverCap() const {
  if (!SaverActive() || awaiting_first_ > 0) return std::nullopt;
  if (saver_->clock() >= saver_settings_->clocks.front()) return std::nullopt;
  return saver_->clock();
}

void Agent::PromptArrived() {
  core::MutexLock lock(&mu_);
  const bool lowered = SaverCap().has_value();
  ++awaiting_first_;
  if (awaiting_first_ != 1 || !lowered) return;
  ++boosts_;
  boosted_since_ = clock_->Now();
  if (auto st = ApplyAll(); !st) {
    spdlog::error("lifting the energy saver's clock for a prompt: {}", st.error().message());
  }
}

void Agent::FirstTokenLeft() {
  core::MutexLock lock(&mu_);
  if (awaiting_first_ == 0) {
    spdlog::error("energy saver: a first token with no prompt waiting (ignored)");
    return;
  }
  if (--awaiting_first_ > 0) return;
  if (boosted_since_) {
    boosted_ += clock_->Now() - *boosted_since_;
    boosted_since_.reset();
  }
  if (!SaverCap()) return;
  if (auto st = ApplyAll(); !st) {
    spdlog::error("putting the energy saver's clock back: {}", st.error().message());
  }
}

std::optional<core::Megahertz> Agent::RowCap() const {
  std::optional<core::Megahertz> lowest;
  const auto lower = [&lowest](core::Megahertz f) { lowest = lowest ? std::min(*lowest, f) : f; };
  for (size_t i = 0; i < gpus_.size(); ++i) {
    const model::GpuSpec& spec = gpus_[i].spec;
    if (caps_[i].brake) lower(spec.SnapClock(spec.brake_clock));
    if (caps_[i].sm_clock) lower(spec.SnapClock(*caps_[i].sm_clock));
    if (failsafe_active_) lower(gpus_[i].failsafe_clock);
  }
  return lowest;
}

void Agent::ResetEnergySaver() {
  if (!saver_settings_) return;
  saver_ = *policy::EnergySaver::Make(*saver_settings_);  // checked in Create
  saver_choice_.reset();
}

void Agent::StepEnergySaver(core::TimePoint now) {
  if (!SaverActive()) return;
  saver_choice_ = saver_->Step(now.time_since_epoch(), engine_.latency(), RowCap());
  if (!saver_choice_->changed) return;
  spdlog::info("energy saver: {:.0f} MHz ({}){}", saver_choice_->saver.value(),
               saver_choice_->reason,
               saver_choice_->row_cap_wins
                   ? fmt::format("; the row's cap {:.0f} MHz wins", saver_choice_->applied.value())
                   : std::string());
  if (auto st = ApplyAll(); !st) {
    spdlog::error("applying the energy saver's clock: {}", st.error().message());
  }
}

void Agent::RecordTokenEnergy(const core::Result<EngineSample>& scrape, core::TimePoint now) {
  if (!scrape) {
    token_energy_.Drop();
    return;
  }
  const core::Result<core::Joules> energy = telemetry::SummedEnergy(Devices());
  if (!energy) {
    energy_read_error_ = energy.error().message();
    token_energy_.Drop();
    return;
  }
  energy_read_error_.clear();
  token_energy_.Add({.at = now,
                     .energy = *energy,
                     .prompt_tokens = scrape->prompt_tokens,
                     .generated_tokens = scrape->generation_tokens,
                     .iterations = scrape->iterations.value_or(0)});
}

ordered_json Agent::EnergySaverJson(core::TimePoint now) const {
  if (!saver_) return nullptr;
  const policy::EnergySaverSettings& s = *saver_settings_;
  const policy::ClockChoice held = policy::UnderRowCap(saver_->clock(), RowCap());
  ordered_json out;
  out["clock_mhz"] = held.saver.value();
  out["applied_mhz"] = held.applied.value();
  out["row_cap_wins"] = held.row_cap_wins;
  out["reason"] = saver_paused_   ? std::string("paused by DELETE /v1/caps until the next PUT")
                  : saver_choice_ ? saver_choice_->reason
                                  : std::string("not stepped yet");
  out["itl_p50_slo_s"] = s.itl_p50_slo_s;
  if (options_.energy_saver->prefill_boost) {
    // The first token is the boost's to keep: the saver steps on the inter-token latency alone.
    out["ttft_p99_slo_s"] = nullptr;
    out["prefill_boost"] = {{"prompts_waiting", awaiting_first_},
                            {"boosts", boosts_},
                            {"boosted_s", core::ToSeconds(BoostedFor(now))}};
  } else {
    out["ttft_p99_slo_s"] = s.ttft_p99_slo_s;
    out["prefill_boost"] = nullptr;
  }
  out["margin"] = s.margin;
  std::vector<double> clocks;
  for (core::Megahertz f : s.clocks) clocks.push_back(f.value());
  out["clocks_mhz"] = clocks;
  const std::optional<policy::LatencyWindow>& w = engine_.latency();
  const auto or_null = [](const std::optional<double>& v) {
    return v ? ordered_json(*v) : ordered_json(nullptr);
  };
  if (!w) {
    out["latency"] = nullptr;
  } else if (!w->invalid.empty()) {
    out["latency"] = {{"invalid", w->invalid}};
  } else {
    out["latency"] = {{"itl_p50_s", or_null(w->itl_p50_s)},
                      {"ttft_p99_s", or_null(w->ttft_p99_s)},
                      {"age_s", core::ToSeconds(now.time_since_epoch() - w->at)}};
  }
  return out;
}

void Agent::TokenEnergyState(ordered_json& out) const {
  const std::optional<telemetry::TokenEnergy> fit = token_energy_.Fit();
  if (!fit) {
    out["token_energy"] = nullptr;
    if (engine_scraped_) {
      out["token_energy_why"] =
          !energy_read_error_.empty() ? energy_read_error_ : token_energy_.why();
    }
    return;
  }
  out["token_energy"] = telemetry::TokenEnergyJson(*fit);
  if (!fit->split) out["token_energy_why"] = token_energy_.why();
}

void Agent::EnergyMetrics(telemetry::PrometheusWriter& out) const {
  if (const std::optional<telemetry::TokenEnergy> fit = token_energy_.Fit()) {
    const auto gauge = [&out](const char* name, const char* help, double value) {
      out.Family(name, "gauge", help);
      out.Sample(value);
    };
    gauge("headroom_agent_token_energy_split",
          "1 when the fit tells prompt tokens from generated ones apart; 0 when the windows' mix "
          "never varied, and J per generated token includes the prompts' share.",
          fit->split ? 1 : 0);
    if (fit->split) {
      gauge("headroom_agent_joules_per_prompt_token",
            "GPU energy per prompt token, fitted over the recent engine windows.",
            fit->j_per_prompt_token);
      gauge("headroom_agent_joules_per_prompt_token_stderr",
            "Standard error of headroom_agent_joules_per_prompt_token.",
            fit->j_per_prompt_token_se);
    }
    gauge("headroom_agent_joules_per_generated_token",
          "GPU energy per generated token, fitted over the recent engine windows (the prompts' "
          "share included where headroom_agent_token_energy_split is 0).",
          fit->j_per_generated_token);
    gauge("headroom_agent_joules_per_generated_token_stderr",
          "Standard error of headroom_agent_joules_per_generated_token.",
          fit->j_per_generated_token_se);
    gauge("headroom_agent_joules_per_generated_token_all_in",
          "The GPUs' whole energy over the fit's windows per generated token, idle included (as "
          "ML.ENERGY's leaderboard counts a token).",
          fit->AllIn());
    gauge("headroom_agent_idle_watts",
          "The GPUs' power with no token processed, from the same fit.", fit->idle_w);
    gauge("headroom_agent_idle_watts_stderr", "Standard error of headroom_agent_idle_watts.",
          fit->idle_w_se);
    gauge("headroom_agent_token_energy_windows", "Engine windows the J/token fit rests on.",
          static_cast<double>(fit->windows));
  }
  if (const auto& w = engine_.latency(); w && w->invalid.empty()) {
    out.Family("headroom_engine_itl_p50_seconds", "gauge",
               "The serving engine's inter-token latency P50 over its last window.");
    if (w->itl_p50_s) out.Sample(*w->itl_p50_s);
    out.Family("headroom_engine_ttft_p99_seconds", "gauge",
               "The serving engine's time-to-first-token P99 over its last window.");
    if (w->ttft_p99_s) out.Sample(*w->ttft_p99_s);
  }
  if (!saver_) return;
  const policy::ClockChoice held = policy::UnderRowCap(saver_->clock(), RowCap());
  out.Family("headroom_agent_energy_saver_clock_hertz", "gauge",
             "SM clock the energy saver wants.");
  out.Sample(held.saver.value() * 1e6);
  out.Family("headroom_agent_energy_saver_applied_clock_hertz", "gauge",
             "The lower of the energy saver's clock and the row's cap.");
  out.Sample(held.applied.value() * 1e6);
  out.Family("headroom_agent_energy_saver_row_cap_wins", "gauge",
             "1 while the row's cap is below the energy saver's clock.");
  out.Sample(held.row_cap_wins ? 1 : 0);
  out.Family("headroom_agent_energy_saver_reason", "gauge",
             "Why the energy saver holds its clock: slack, holding, breach, no_signal, paused.");
  out.Sample(1, {{"reason", ReasonKind(saver_choice_, saver_paused_)}});
  if (options_.energy_saver->prefill_boost) BoostMetrics(out);
}

core::Duration Agent::BoostedFor(core::TimePoint now) const {
  return boosted_ + (boosted_since_ ? now - *boosted_since_ : core::Duration{0});
}

void Agent::BoostMetrics(telemetry::PrometheusWriter& out) const {
  out.Family("headroom_agent_prompts_waiting", "gauge",
             "Prompts the engine proxy passed on whose first token has not left yet.");
  out.Sample(awaiting_first_);
  out.Family("headroom_agent_energy_saver_boosts_total", "counter",
             "Times a waiting prompt lifted the energy saver's clock (the prefill boost).");
  out.Sample(static_cast<double>(boosts_));
  out.Family("headroom_agent_energy_saver_boosted_seconds_total", "counter",
             "Time the energy saver's clock was lifted for waiting prompts.");
  out.Sample(core::ToSeconds(BoostedFor(clock_->Now())));
}

}  // namespace headroom::service
