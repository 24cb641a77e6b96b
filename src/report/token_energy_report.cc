#include "report/token_energy_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "format/table.h"

namespace headroom::report {
namespace {

// Three significant figures for the value; its error to the same decimal place.
std::string WithError(double value, double se) {
  const int decimals =
      value == 0 ? 3 : std::max(0, 2 - static_cast<int>(std::floor(std::log10(std::abs(value)))));
  return fmt::format("{:.{}f} ± {:.{}f}", value, decimals, se, decimals);
}

// Where the fit's idle power came from (telemetry::TokenEnergy::idle_from), as a phrase.
std::string IdleFrom(const std::string& from) {
  if (from == "token-free windows") return "measured in the windows without tokens";
  if (from == "rated") return "the GPUs' rated idle power (no five windows without tokens)";
  return "fitted with the costs (no window without tokens, no rated idle power)";
}

}  // namespace

std::string TokenEnergyText(const TokenEnergyWatch& w, const format::TextStyle& style) {
  std::string out = fmt::format(
      "engine {}: {} windows over {}, {} GPU(s); {:.0f} prompt and {:.0f} generated tokens, "
      "{:.1f} kJ{}\n",
      w.url, w.windows, format::FormatSeconds(w.seconds), w.gpus, w.prompt_tokens,
      w.generated_tokens, w.energy_j / 1e3,
      w.failed_scrapes > 0 ? fmt::format("; {} scrape(s) failed", w.failed_scrapes)
                           : std::string());
  if (!w.fit) return out + fmt::format("no J/token: {}\n", w.why);
  format::TextTable table({{"what", format::TextTable::Align::kLeft}, {"value ± SE"}});
  if (w.fit->split) {
    table.AddRow(
        {"J per prompt token", WithError(w.fit->j_per_prompt_token, w.fit->j_per_prompt_token_se)});
  }
  table.AddRow({w.fit->split ? "J per generated token" : "J per generated token, prompts included",
                WithError(w.fit->j_per_generated_token, w.fit->j_per_generated_token_se)});
  table.AddRow({"idle W", WithError(w.fit->idle_w, w.fit->idle_w_se)});
  // Not fitted: the windows' energy over their generated tokens, as ML.ENERGY counts a token.
  table.AddRow({"J per generated token, all in", fmt::format("{:.4g}", w.fit->AllIn())});
  const std::string unsplit =
      w.fit->split ? std::string()
                   : fmt::format("prompt and generated tokens not told apart: {}\n", w.why);
  return out + table.Render(style) + unsplit +
         fmt::format(
             "fitted on {} windows (least squares of the energy above idle on the tokens; "
             "idle power {})\n",
             w.fit->windows, IdleFrom(w.fit->idle_from));
}

nlohmann::ordered_json TokenEnergyJson(const TokenEnergyWatch& w) {
  nlohmann::ordered_json out;
  out["url"] = w.url;
  out["gpus"] = w.gpus;
  out["seconds"] = w.seconds;
  out["scrapes"] = w.scrapes;
  out["failed_scrapes"] = w.failed_scrapes;
  out["windows"] = w.windows;
  out["prompt_tokens"] = w.prompt_tokens;
  out["generated_tokens"] = w.generated_tokens;
  out["energy_j"] = w.energy_j;
  if (!w.fit) {
    out["token_energy"] = nullptr;
    out["token_energy_why"] = w.why;
    return out;
  }
  // The agent's /v1/state names.
  out["token_energy"] = telemetry::TokenEnergyJson(*w.fit);
  if (!w.fit->split) out["token_energy_why"] = w.why;
  return out;
}

}  // namespace headroom::report
