#include "report/simulation_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/parse.h"
#include "format/table.h"
#include "report/plan_report.h"
#include "sim/run_summary.h"
#include "telemetry/token_energy.h"

namespace headroom::report {
namespace {

std::string Pct(double pct) { return format::FormatChange(pct / 100); }

}  // namespace

nlohmann::ordered_json RunJson(const sim::RunSummary& run) {
  return format::TableJson(run, kRunSummaryFields);
}

namespace {

// The engine and the scheduler's settings a simulation ran with (issue 45: named in every output).
nlohmann::ordered_json ServingJson(const sim::RowResult& r) {
  const sim::InstanceConfig& i = r.serving;
  nlohmann::ordered_json j;
  j["engine"] = r.engine.name;
  j["engine_version"] = r.engine.version;
  j["engine_description"] = r.engine.description;
  j["tp"] = i.tp;
  j["max_batch_sequences"] = i.max_batch_sequences;
  j["chunked_prefill"] = i.max_num_batched_tokens > 0;
  j["max_num_batched_tokens"] = i.max_num_batched_tokens;
  j["max_prefill_tokens"] = i.max_prefill_tokens;
  j["prefix_cache"] = {{"shared_prefix_tokens", i.prefix_cache.shared_prefix_tokens},
                       {"hit_rate", i.prefix_cache.hit_rate}};
  j["overhead"] = {{"per_request_s", i.overhead.per_request_s},
                   {"per_prompt_token_s", i.overhead.per_prompt_token_s}};
  if (i.sm_clock_lock_mhz > 0) j["sm_clock_lock_mhz"] = i.sm_clock_lock_mhz;
  return j;
}

std::string ServingText(const sim::RowResult& r) {
  const sim::InstanceConfig& i = r.serving;
  std::string out =
      fmt::format("engine: {} ({}); tp {}, ", r.engine.Label(), r.engine.description, i.tp);
  out += i.max_num_batched_tokens > 0
             ? fmt::format("chunked prefill within {} tokens", i.max_num_batched_tokens)
             : fmt::format("whole prompts up to {} tokens", i.max_prefill_tokens);
  if (i.prefix_cache.shared_prefix_tokens > 0) {
    out += fmt::format(", {} cached prefix tokens", i.prefix_cache.shared_prefix_tokens);
  } else if (i.prefix_cache.hit_rate > 0) {
    out += fmt::format(", {:.0f}% of each prompt cached", i.prefix_cache.hit_rate * 100);
  }
  if (i.overhead.per_request_s > 0 || i.overhead.per_prompt_token_s > 0) {
    out += fmt::format(", server overhead {} + {:g} us a prompt token",
                       format::FormatSeconds(i.overhead.per_request_s),
                       i.overhead.per_prompt_token_s * 1e6);
  }
  if (i.sm_clock_lock_mhz > 0)
    out += fmt::format(", SM clock locked at {:.0f} MHz", i.sm_clock_lock_mhz);
  return out + "\n";
}

nlohmann::ordered_json SwingJson(const sim::BandSwing& b) {
  return {{"lo_hz", b.lo_hz},
          {"hi_hz", b.hi_hz},
          {"share", b.share},
          {"rms_w", b.rms_w},
          {"amplitude_w", b.amplitude_w}};
}

// The row's swing in the grid's bands, each as far as the metering resolves it.
std::string SwingText(const sim::RowResult& r) {
  const auto band = [&](const sim::BandSwing& b) {
    if (b.lo_hz >= r.swing_nyquist_hz) {
      return fmt::format("{:g}-{:g} Hz not resolved", b.lo_hz, b.hi_hz);
    }
    return fmt::format("{:g}-{:g} Hz {:.1f} kW amplitude ({:.0f}% of the swing{})", b.lo_hz,
                       b.hi_hz, b.amplitude_w / 1e3, b.share * 100,
                       b.hi_hz > r.swing_nyquist_hz
                           ? fmt::format(", up to {:g} Hz", r.swing_nyquist_hz)
                           : std::string());
  };
  return fmt::format("swing: {}; {} (metered every {:g} s)\n", band(r.swing_low),
                     band(r.swing_high), 0.5 / r.swing_nyquist_hz);
}

}  // namespace

std::string DayAndTime(double seconds) {
  const auto whole = static_cast<long long>(seconds);
  return fmt::format("d{} {:02}:{:02}", whole / 86400, whole % 86400 / 3600, whole % 3600 / 60);
}

namespace {

// The uncapped run's event at the same time, where there is one.
const sim::BudgetEvent* SameEvent(const sim::BudgetEvent& e, const sim::RowResult* uncapped) {
  if (uncapped == nullptr) return nullptr;
  for (const sim::BudgetEvent& u : uncapped->budget_events) {
    if (u.start_s == e.start_s) return &u;
  }
  return nullptr;
}

}  // namespace

nlohmann::ordered_json BudgetEventsJson(const sim::RowResult& r, const sim::RowResult* uncapped) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (const sim::BudgetEvent& e : r.budget_events) {
    nlohmann::ordered_json j;
    j["reason"] = e.reason;
    j["start_s"] = e.start_s;
    j["end_s"] = e.end_s;
    j["budget_w"] = e.budget_w;
    j["shed"] = r.budget_w > 0 ? 1 - e.budget_w / r.budget_w : 0;
    j["comply_within_s"] = e.comply_within_s;
    j["power_before_w"] = e.power_before_w;
    j["complied_after_s"] = e.compliance.complied_after_s
                                ? nlohmann::ordered_json(*e.compliance.complied_after_s)
                                : nlohmann::ordered_json();
    j["complied_in_time"] =
        e.compliance.complied_after_s && *e.compliance.complied_after_s <= e.comply_within_s;
    j["over_after_deadline_s"] = e.compliance.over_after_deadline_s;
    j["peak_after_deadline_w"] = e.compliance.peak_after_deadline_w;
    j["mean_w"] = e.mean_w();
    j["energy_j"] = e.energy_j;
    j["metered_s"] = e.metered_s;
    j["brake_events"] = e.brake_events;
    for (const auto& [name, h] : {std::pair{"hp", &e.hp_e2e}, std::pair{"lp", &e.lp_e2e}}) {
      j[name] = {{"requests", h->count()},
                 {"e2e_p50_s", h->Quantile(0.5)},
                 {"e2e_p99_s", h->Quantile(0.99)}};
    }
    if (const sim::BudgetEvent* u = SameEvent(e, uncapped)) {
      j["energy_not_drawn_j"] = u->energy_j - e.energy_j;
      j["uncapped_mean_w"] = u->mean_w();
      j["hp"]["e2e_p50_change_pct"] =
          sim::PctChange(e.hp_e2e.Quantile(0.5), u->hp_e2e.Quantile(0.5));
      j["lp"]["e2e_p50_change_pct"] =
          sim::PctChange(e.lp_e2e.Quantile(0.5), u->lp_e2e.Quantile(0.5));
    }
    events.push_back(std::move(j));
  }
  return events;
}

std::string BudgetEventsText(const sim::RowResult& r, const sim::RowResult* uncapped,
                             const format::TextStyle& style) {
  if (r.budget_events.empty()) return "";
  format::TextTable table({{"LOWERED BUDGET", format::TextTable::Align::kLeft},
                           {"SHED"},
                           {"COMPLIED"},
                           {"OVER AFTER"},
                           {"BRAKES"},
                           {"kW BEFORE"},
                           {"kW DURING"},
                           {"NOT DRAWN"},
                           {"HP P50"},
                           {"LP P50"},
                           {"REASON", format::TextTable::Align::kLeft}});
  for (const sim::BudgetEvent& e : r.budget_events) {
    const sim::BudgetEvent* u = SameEvent(e, uncapped);
    const auto change = [&](const sim::LatencyHistogram& h, const sim::LatencyHistogram* base) {
      if (h.count() == 0) return std::string("-");
      const std::string p50 = format::FormatSeconds(h.Quantile(0.5));
      if (base == nullptr || base->count() == 0) return p50;
      return fmt::format("{} ({:+.1f}%)", p50,
                         sim::PctChange(h.Quantile(0.5), base->Quantile(0.5)));
    };
    table.AddRow(
        {fmt::format("{} for {}", DayAndTime(e.start_s),
                     core::FormatDuration(std::chrono::round<std::chrono::seconds>(
                         core::FromSeconds(e.end_s - e.start_s)))),
         fmt::format("{:.0f}% to {:.0f} kW", (1 - e.budget_w / r.budget_w) * 100, e.budget_w / 1e3),
         e.compliance.complied_after_s
             ? fmt::format("{:.0f} s of {:.0f}", *e.compliance.complied_after_s, e.comply_within_s)
             : std::string("never"),
         fmt::format("{:.0f} s", e.compliance.over_after_deadline_s),
         std::to_string(e.brake_events), fmt::format("{:.0f}", e.power_before_w / 1e3),
         fmt::format("{:.0f}", e.mean_w() / 1e3),
         u != nullptr ? fmt::format("{:.0f} kWh", (u->energy_j - e.energy_j) / 3.6e6) : "-",
         change(e.hp_e2e, u != nullptr ? &u->hp_e2e : nullptr),
         change(e.lp_e2e, u != nullptr ? &u->lp_e2e : nullptr), e.reason});
  }
  return "\n" + table.Render(style) +
         (uncapped != nullptr ? "(not drawn and P50 E2E changes against the uncapped row)\n" : "");
}

namespace {

// The GPUs' energy by phase and per token, and what the energy saver did (RowResult).
nlohmann::ordered_json GpuEnergyJson(const sim::RowResult& r) {
  nlohmann::ordered_json j;
  j["decode_j"] = r.decode_energy_j;
  j["prefill_j"] = r.prefill_energy_j;
  j["decode_instance_seconds"] = r.decode_seconds;
  j["prompt_tokens"] = r.prompt_tokens;
  j["generated_tokens"] = r.generated_tokens;
  return j;
}

nlohmann::ordered_json EnergySaverJson(const sim::EnergySaverRun& e) {
  nlohmann::ordered_json j;
  j["mean_clock_mhz"] = e.MeanClockMhz();
  j["lowered"] = e.lowered;
  j["raised"] = e.raised;
  j["row_cap_won_server_windows"] = e.row_cap_won;
  j["prefill_boost"] =
      e.prefill_boost
          ? nlohmann::ordered_json{{"boosts", e.boosts},
                                   {"boosted_instance_seconds", e.boosted_instance_seconds},
                                   {"boosted_share", e.BoostedShare()}}
          : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json held = nlohmann::ordered_json::array();
  for (std::size_t k = 0; k < e.clocks_mhz.size(); ++k) {
    held.push_back({{"mhz", e.clocks_mhz[k]}, {"server_seconds", e.server_seconds[k]}});
  }
  j["clocks"] = held;
  return j;
}

// The attribution of each class's servers, averaged over those with a fit, and the exact split.
struct ClassTokenEnergy {
  int servers = 0;
  int fitted = 0;
  telemetry::TokenEnergy fit;                    // means over the fitted servers
  double prompt = 0, generated = 0, idle_w = 0;  // exact, means over the fitted servers
};

ClassTokenEnergy TokenEnergyOf(const sim::RowResult& r, bool hp) {
  ClassTokenEnergy c;
  for (const sim::ServerTokenEnergy& s : r.token_energy) {
    if (s.hp != hp) continue;
    ++c.servers;
    if (!s.fit || !s.fit->split) continue;  // unsplit: no prompt cost to set beside the exact
    ++c.fitted;
    c.fit.j_per_prompt_token += s.fit->j_per_prompt_token;
    c.fit.j_per_generated_token += s.fit->j_per_generated_token;
    c.fit.idle_w += s.fit->idle_w;
    c.prompt += s.TrueJPerPromptToken();
    c.generated += s.TrueJPerGeneratedToken();
    c.idle_w += s.idle_w;
  }
  if (c.fitted > 0) {
    const double n = c.fitted;
    for (double* v : {&c.fit.j_per_prompt_token, &c.fit.j_per_generated_token, &c.fit.idle_w,
                      &c.prompt, &c.generated, &c.idle_w}) {
      *v /= n;
    }
  }
  return c;
}

nlohmann::ordered_json TokenEnergyJson(const sim::RowResult& r) {
  nlohmann::ordered_json servers = nlohmann::ordered_json::array();
  for (const sim::ServerTokenEnergy& s : r.token_energy) {
    nlohmann::ordered_json j;
    j["hp"] = s.hp;
    if (s.fit) {
      j["attributed"] = telemetry::TokenEnergyJson(*s.fit);
      if (!s.fit->split) j["why"] = s.why;
    } else {
      j["attributed"] = nullptr;
      j["why"] = s.why;
    }
    j["exact"] = {{"j_per_prompt_token", s.TrueJPerPromptToken()},
                  {"j_per_generated_token", s.TrueJPerGeneratedToken()},
                  {"idle_w", s.idle_w}};
    servers.push_back(std::move(j));
  }
  return servers;
}

// The servers left out of TokenEnergyText's means, and why (the first one's reason).
std::string NotSplitText(const sim::RowResult& r) {
  int unsplit = 0;
  int none = 0;
  std::string why;
  for (const sim::ServerTokenEnergy& s : r.token_energy) {
    if (s.fit && s.fit->split) continue;
    ++(s.fit ? unsplit : none);
    if (why.empty()) why = s.why;
  }
  if (unsplit + none == 0) return "";
  return fmt::format(
      "{} server(s) with only the whole cost per generated token (unsplit), {} with no fit: {}\n",
      unsplit, none, why);
}

std::string TokenEnergyText(const sim::RowResult& r, const format::TextStyle& style) {
  if (r.token_energy.empty()) return "";
  format::TextTable table({{"CLASS", format::TextTable::Align::kLeft},
                           {"SERVERS"},
                           {"J/PROMPT TOKEN"},
                           {"EXACT"},
                           {"J/GENERATED TOKEN"},
                           {"EXACT"},
                           {"IDLE W"},
                           {"EXACT"}});
  const auto cell = [](double fit, double exact) {
    return fmt::format("{:.4g} ({:+.1f}%)", fit, sim::PctChange(fit, exact));
  };
  for (const bool hp : {true, false}) {
    const ClassTokenEnergy c = TokenEnergyOf(r, hp);
    if (c.servers == 0) continue;
    const std::string servers = fmt::format("{} of {}", c.fitted, c.servers);
    if (c.fitted == 0) {
      table.AddRow({hp ? "HP" : "LP", servers, "-", "-", "-", "-", "-", "-"});
      continue;
    }
    table.AddRow({hp ? "HP" : "LP", servers, cell(c.fit.j_per_prompt_token, c.prompt),
                  fmt::format("{:.4g}", c.prompt), cell(c.fit.j_per_generated_token, c.generated),
                  fmt::format("{:.4g}", c.generated), cell(c.fit.idle_w, c.idle_w),
                  fmt::format("{:.0f}", c.idle_w)});
  }
  return "\nenergy per token, attributed from each server's engine windows as the agent does live "
         "(mean over the servers whose fit split the two; change against the exact split):\n" +
         table.Render(style) + NotSplitText(r);
}

std::string EnergyText(const sim::RowResult& r) {
  std::string out = fmt::format(
      "GPU energy: decode {:.1f} kWh ({:.3f} J per generated token), iterations with prefill "
      "{:.1f} kWh\n",
      r.decode_energy_j / 3.6e6,
      r.generated_tokens > 0 ? r.decode_energy_j / r.generated_tokens : 0.0,
      r.prefill_energy_j / 3.6e6);
  if (r.energy_saver) {
    const sim::EnergySaverRun& e = *r.energy_saver;
    out += fmt::format(
        "energy saver: mean clock {:.0f} MHz of {:.0f}; stepped down {} times, back up {}; the "
        "row's cap won {} server-windows\n",
        e.MeanClockMhz(), e.clocks_mhz.empty() ? 0.0 : e.clocks_mhz.front(), e.lowered, e.raised,
        e.row_cap_won);
    if (e.prefill_boost) {
      out += fmt::format(
          "prefill boost: {} boosts (a waiting prompt lifting the saver's clock); the top clock "
          "{:.1f}% of instance time\n",
          e.boosts, 100 * e.BoostedShare());
    }
  }
  return out;
}

}  // namespace

nlohmann::ordered_json SimulationJson(const sim::RowResult& r, const sim::RowResult* uncapped) {
  nlohmann::ordered_json j = RunJson(sim::Summarize(r));
  j["serving"] = ServingJson(r);
  j["duration_s"] = r.duration_s;
  j["simulated_s"] = r.simulated_s;
  j["hp"]["rejected"] = r.hp.rejected;
  j["lp"]["rejected"] = r.lp.rejected;
  j["hp"]["preemptions"] = r.hp.preemptions;
  j["lp"]["preemptions"] = r.lp.preemptions;
  nlohmann::ordered_json states = nlohmann::ordered_json::object();
  for (std::size_t i = 0; i < r.states.size(); ++i) states[r.states[i]] = r.state_seconds[i];
  j["state_seconds"] = states;
  j["cap_actions"] = r.cap_actions;
  j["uncap_actions"] = r.uncap_actions;
  j["brake_server_seconds"] = r.brake_seconds;
  // Distribution of metered row power as a fraction of the budget, in 5% bins.
  nlohmann::ordered_json dist = nlohmann::ordered_json::object();
  for (std::size_t b = 0; b < r.power_bins.size(); ++b) {
    if (r.power_bins[b] == 0) continue;
    dist[fmt::format("{:.2f}", static_cast<double>(b) / 20.0)] =
        static_cast<double>(r.power_bins[b]) / static_cast<double>(r.power_samples);
  }
  j["row_power"]["distribution"] = dist;
  j["events_processed"] = r.events_processed;
  j["iterations"] = r.iterations;
  j["row_power"]["max_ramp_w_per_s"] = r.max_ramp_w_per_s;
  if (r.swing_nyquist_hz > 0) {
    j["row_power"]["swing"] = {{"nyquist_hz", r.swing_nyquist_hz},
                               {"low_band", SwingJson(r.swing_low)},
                               {"high_band", SwingJson(r.swing_high)}};
  }
  j["ramp_held_server_steps"] = r.ramp_held_server_steps;
  j["load_ramps"] = r.load_ramps;
  j["gpu_energy"] = GpuEnergyJson(r);
  if (r.energy_saver) j["energy_saver"] = EnergySaverJson(*r.energy_saver);
  if (!r.token_energy.empty()) j["token_energy"] = TokenEnergyJson(r);
  if (!r.budget_events.empty()) j["budget_events"] = BudgetEventsJson(r, uncapped);
  return j;
}

std::string SimulationText(const sim::RowResult& r, const format::TextStyle& style,
                           const sim::RowResult* uncapped) {
  const sim::RunSummary s = sim::Summarize(r);
  std::string out = style.Bold(fmt::format(
                        "{} servers ({} HP, {} LP), policy {}, {:.1f} h of arrivals", s.servers,
                        s.hp_servers, s.servers - s.hp_servers, s.policy, r.duration_s / 3600)) +
                    "\n";
  out += ServingText(r);
  if (r.hp.preemptions + r.lp.preemptions > 0) {
    const std::uint64_t n = r.hp.preemptions + r.lp.preemptions;
    out +=
        fmt::format("KV cache full: {} sequence{} preempted and prefilled again (HP {}, LP {})\n",
                    n, n == 1 ? "" : "s", r.hp.preemptions, r.lp.preemptions);
  }
  out += fmt::format(
      "row power: peak {:.1f}% of {:.0f} kW, mean {:.1f}%, largest rise {:.1f}% within the cap "
      "delay and {:.1f} kW/s between samples; brake "
      "events {}; over budget {:.0f} s; capped {:.1f}% of server time\n",
      s.peak_frac * 100, s.budget_w / 1e3, s.mean_frac * 100, s.max_rise_frac * 100,
      r.max_ramp_w_per_s / 1e3, s.brake_events, s.over_budget_s, s.capped_server_fraction * 100);
  if (r.swing_nyquist_hz > 0) out += SwingText(r);
  out += EnergyText(r);
  if (r.ramp_held_server_steps > 0 || r.load_ramps > 0) {
    out += fmt::format(
        "ramp limit: lifts held back {} server-steps; the load rose faster than the limit on its "
        "own {} times\n",
        r.ramp_held_server_steps, r.load_ramps);
  }
  out += "\n";
  format::TextTable table({{"CLASS", format::TextTable::Align::kLeft},
                           {"REQUESTS"},
                           {"TTFT P50"},
                           {"TTFT P99"},
                           {"TBT P50"},
                           {"TBT P99"},
                           {"E2E P50"},
                           {"E2E P99"},
                           {"TOKENS/s"}});
  for (const auto& [name, c] : {std::pair{"HP", s.hp}, std::pair{"LP", s.lp}}) {
    table.AddRow({name, std::to_string(c.requests), format::FormatSeconds(c.ttft_p50_s),
                  format::FormatSeconds(c.ttft_p99_s), format::FormatSeconds(c.tbt_p50_s),
                  format::FormatSeconds(c.tbt_p99_s), format::FormatSeconds(c.e2e_p50_s),
                  format::FormatSeconds(c.e2e_p99_s), fmt::format("{:.0f}", c.throughput_tok_s)});
  }
  out += table.Render(style);
  if (!r.states.empty()) {
    out += "\ntime in state:";
    const double total = r.simulated_s > 0 ? r.simulated_s : 1;
    for (std::size_t i = 0; i < r.states.size(); ++i) {
      out += fmt::format(" {} {:.2f}%", r.states[i], r.state_seconds[i] / total * 100);
    }
    out += fmt::format("; cap actions {}, uncap actions {}\n", r.cap_actions, r.uncap_actions);
  }
  return out + TokenEnergyText(r, style) + BudgetEventsText(r, uncapped, style);
}

namespace {

// With a colour TextStyle: the header bold, the chosen policy's row (sim::ChosenPolicy) green.
// With unseen weeks, a column says how many held at the answer and what the search alone said
// when they lowered it ("8/8, was 51").
std::string PlanTable(const sim::CapacityPlan& plan, const format::TextStyle& style) {
  const bool unseen = plan.validation_weeks > 0;
  // Every column but SERVERS, BRAKES and UNSEEN is a percentage: the cells carry their '%'.
  std::vector<format::TextTable::Column> columns = {{"POLICY", format::TextTable::Align::kLeft},
                                                    {"SERVERS"},
                                                    {"EXTRA"},
                                                    {"HP P50"},
                                                    {"HP P99"},
                                                    {"LP P50"},
                                                    {"LP TOK/s"},
                                                    {"PEAK"},
                                                    {"BRAKES"},
                                                    {"CAPPED"}};
  if (unseen) columns.push_back({"UNSEEN RISK"});
  columns.push_back({"NEXT SERVER FAILS ON", format::TextTable::Align::kLeft});
  format::TextTable table(columns);
  for (const sim::PolicyPlan& p : plan.policies) {
    std::vector<std::string> row;
    if (p.max_servers == 0) {  // fails even at the provisioned row
      row = {p.policy, "-", "-", "-", "-", "-", "-", "-", "-", "-"};
      if (unseen) row.push_back(UnseenWeeks(plan, p));
      row.push_back(style.Red(p.limit));
      table.AddRow(row);
      continue;
    }
    const format::Tone tone =
        &p == sim::ChosenPolicy(plan) ? format::Tone::kGreen : format::Tone::kPlain;
    row = {p.policy,
           std::to_string(p.max_servers),
           fmt::format("{:+.0f}%", p.extra_pct),
           Pct(p.impact.hp_p50_e2e_pct),
           Pct(p.impact.hp_p99_e2e_pct),
           Pct(p.impact.lp_p50_e2e_pct),
           Pct(p.impact.lp_throughput_pct),
           fmt::format("{:.1f}%", p.at_max.peak_frac * 100),
           std::to_string(p.at_max.brake_events),
           fmt::format("{:.1f}%", p.at_max.capped_server_fraction * 100)};
    if (unseen) row.push_back(UnseenWeeks(plan, p));
    row.push_back(p.limit);
    table.AddRow(row, tone);
  }
  return table.Render(style);
}

// Per policy and count judged on the unseen weeks: how many, with a power event, near the budget,
// the share and the bounds on the weekly risk. Empty without unseen weeks.
std::string RiskTable(const sim::CapacityPlan& plan, const format::TextStyle& style) {
  using Align = format::TextTable::Align;
  format::TextTable table({{"POLICY", Align::kLeft},
                           {"SERVERS"},
                           {"UNSEEN WEEKS"},
                           {"POWER EVENTS"},
                           {"NEAR BUDGET"},
                           {"SHARE"},
                           {fmt::format("WEEKLY RISK ({:g}%)", plan.confidence * 100)}});
  int rows = 0;
  for (const sim::CountRisk& c : sim::PlanRisk(plan)) {
    if (c.unseen_weeks == 0) continue;
    const sim::PolicyPlan* p = nullptr;
    for (const sim::PolicyPlan& q : plan.policies) {
      if (q.policy == c.policy) p = &q;
    }
    const bool answer = p != nullptr && p->max_servers == c.servers;
    table.AddRow(
        {c.policy, std::to_string(c.servers) + (answer ? "*" : ""), std::to_string(c.unseen_weeks),
         std::to_string(c.unseen_weeks_with_power_event),
         std::to_string(c.unseen_weeks_near_budget),
         fmt::format("{:.1f}%", 100.0 * c.unseen_weeks_with_power_event / c.unseen_weeks),
         fmt::format("{:.1f}% to {:.1f}%", c.unseen_risk_lower * 100, c.unseen_risk_upper * 100)},
        answer && p == sim::ChosenPolicy(plan) ? format::Tone::kGreen : format::Tone::kPlain);
    ++rows;
  }
  if (rows == 0) return "";
  return "\n" + table.Render(style) +
         fmt::format(
             "(* the answer; each bound one-sided at {:g}%; a week near the budget counts "
             "as an event for the upper bound)\n",
             plan.confidence * 100);
}

// "1 planning week (seed 1); checked on 2 unseen weeks (seeds 1001 to 1002)"
std::string PlanWeeks(const sim::CapacityPlan& plan) {
  const auto seeds = [&](int from, int to) {
    const auto seed = [&](int w) { return plan.week_seeds.at(static_cast<std::size_t>(w)); };
    return to - from == 1 ? fmt::format("seed {}", seed(from))
                          : fmt::format("seeds {} to {}", seed(from), seed(to - 1));
  };
  const int k = plan.planning_weeks;
  const int searched = sim::SearchedWeeks(plan);
  std::string out = fmt::format("{} planning week{} ({})", k, k == 1 ? "" : "s", seeds(0, k));
  if (!plan.stress_cases.empty()) {
    out += fmt::format(" and stress case{} {}", plan.stress_cases.size() == 1 ? "" : "s",
                       fmt::join(plan.stress_cases, ", "));
  }
  if (plan.validation_weeks == 0) return out + "; no unseen weeks, no weekly risk bound";
  return out + fmt::format(
                   "\na count fits only if its weekly risk of a power event, bounded from {} "
                   "unseen week{} ({}) at {:g}% confidence, is at most {:g}%",
                   plan.validation_weeks, plan.validation_weeks == 1 ? "" : "s",
                   seeds(searched, searched + plan.validation_weeks), plan.confidence * 100,
                   plan.max_weekly_risk * 100);
}

}  // namespace

void WritePowerCsv(const sim::RowResult& r, std::ostream& out) {
  out << "time_s,row_w,row_frac,state\n";
  for (const sim::PowerSample& s : r.power) {
    out << fmt::format("{:.3f},{:.1f},{:.5f},{}\n", s.time_s, s.row_w, s.row_w / r.budget_w,
                       r.states.at(static_cast<std::size_t>(s.state)));
  }
}

void WriteRequestCsvHeader(std::ostream& out) {
  out << "arrival_s,priority,server,prompt_tokens,output_tokens,ttft_s,tbt_s,e2e_s\n";
}

void WriteRequestCsvRow(const sim::RequestResult& r, std::ostream& out) {
  out << fmt::format("{:.6f},{},{},{},{},{:.6f},{:.6f},{:.6f}\n", r.arrival_s,
                     r.priority == sim::Priority::kHigh ? "hp" : "lp", r.server, r.prompt_tokens,
                     r.output_tokens, r.ttft_s, r.tbt_s, r.e2e_s);
}

std::string PlanText(const sim::CapacityPlan& plan, const sim::Scenario& s,
                     const std::string& engine, const std::string& ran_on,
                     const format::TextStyle& style) {
  const sim::RunSummary& b = plan.baseline;
  return style.Bold(fmt::format("{}: {}", s.name, s.description)) + "\n" +
         fmt::format("serving engine: {}\n", engine) +
         fmt::format(
             "budget {:.0f} kW for {} servers; uncapped baseline peaks at {:.1f}% (mean "
             "{:.1f}%), HP P50/P99 end-to-end {:.2f}/{:.2f} s, LP {:.2f}/{:.2f} s\n"
             "SLO: 0 brakes, HP P50 within +{}% and P99 within +{}%, LP P50 within +{}% of the "
             "uncapped row at the same per-server load and week\n{}\n\n",
             b.budget_w / 1e3, plan.baseline_servers, b.peak_frac * 100, b.mean_frac * 100,
             b.hp.e2e_p50_s, b.hp.e2e_p99_s, b.lp.e2e_p50_s, b.lp.e2e_p99_s, s.slo.hp_p50_e2e_pct,
             s.slo.hp_p99_e2e_pct, s.slo.lp_p50_e2e_pct, PlanWeeks(plan)) +
         PlanTable(plan, style) + RiskTable(plan, style) + "\n" +
         style.Bold(PlanAnswer(plan, s.slo)) + "\n" +
         fmt::format("{} simulations {}\n", plan.simulations, ran_on);
}

nlohmann::ordered_json CalibrationJson(const sim::Calibration& c, const sim::Scenario& s,
                                       double target_peak_frac) {
  return {{"scenario", s.name},
          {"target_peak_frac", target_peak_frac},
          {"peak_frac", c.peak_frac},
          {"factor", c.factor},
          {"hp_rate_per_server", c.hp_rate_per_server},
          {"lp_rate_per_server", c.lp_rate_per_server},
          {"simulations", c.simulations}};
}

std::string CalibrationText(const sim::Calibration& c, const sim::Scenario& s) {
  return fmt::format(
      "{}: the uncapped row of {} servers peaks at {:.2f}% of its budget with\n"
      "  hp_rate_per_server: {:.4f}\n  lp_rate_per_server: {:.4f}\n"
      "(x{:.4f} the scenario's rates; {} simulations)\n",
      s.name, s.servers, c.peak_frac * 100, c.hp_rate_per_server, c.lp_rate_per_server, c.factor,
      c.simulations);
}

}  // namespace headroom::report
