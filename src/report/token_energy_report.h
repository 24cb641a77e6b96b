// What `headroom measure --engine-metrics URL --duration D` found (issue 51): a running serving
// engine watched from outside, its GPUs' energy attributed to prompt tokens, generated tokens and
// idle time (telemetry::TokenEnergyFit), as a table and as JSON. Pure.
#ifndef HEADROOM_REPORT_TOKEN_ENERGY_REPORT_H_
#define HEADROOM_REPORT_TOKEN_ENERGY_REPORT_H_

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "format/text_style.h"
#include "telemetry/token_energy.h"

namespace headroom::report {

struct TokenEnergyWatch {
  std::string url;
  int gpus = 0;
  double seconds = 0;       // from the first good scrape to the last
  std::size_t scrapes = 0;  // good ones
  std::size_t failed_scrapes = 0;
  std::size_t windows = 0;   // between consecutive good reads, offered to the fit
  double prompt_tokens = 0;  // over all windows
  double generated_tokens = 0;
  double energy_j = 0;  // the GPUs' energy over all windows
  std::optional<telemetry::TokenEnergy> fit = {};
  std::string why = {};  // why there is no fit, or why it did not split the costs
};

// A header line, then J per prompt token, J per generated token and idle W, each ± its standard
// error; or the fit's why-not.
std::string TokenEnergyText(const TokenEnergyWatch& watch,
                            const format::TextStyle& style = format::TextStyle());
nlohmann::ordered_json TokenEnergyJson(const TokenEnergyWatch& watch);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_TOKEN_ENERGY_REPORT_H_
