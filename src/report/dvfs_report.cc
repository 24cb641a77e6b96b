#include "report/dvfs_report.h"

#include <fmt/format.h>

#include "format/table.h"

namespace headroom::report {
namespace {

using nlohmann::ordered_json;

std::string Pct(double fraction) { return format::FormatChange(fraction); }

// Power with a '!' where even the lowest clock cannot bring it under the limit, else a space, so
// the digits of a right-aligned column line up.
std::string PowerUnder(const model::PhaseOutcome& o, core::Watts limit,
                       const format::TextStyle& style) {
  const std::string power = fmt::format("{:.0f}", o.power.value());
  return o.power > limit + core::Watts(0.5) ? style.Red(power + "!") : power + " ";
}

ordered_json OutcomeJson(const model::PhaseOutcome& o) {
  return {
      {"sm_clock_mhz", o.clock.value()}, {"power_w", o.power.value()}, {"time_s", o.time_s},
      {"energy_j", o.energy.value()},    {"slowdown", o.slowdown},     {"power_cut", o.power_cut},
      {"energy_rel", o.energy_rel}};
}

std::string ClockTable(const std::vector<model::SweepRow>& rows, const format::TextStyle& style) {
  format::TextTable table({{"SM MHz"},
                           {"PREFILL W"},
                           {"PREFILL POWER"},
                           {"PREFILL TIME"},
                           {"PREFILL ENERGY"},
                           {"DECODE W"},
                           {"DECODE POWER"},
                           {"DECODE TIME"},
                           {"DECODE ENERGY"}});
  for (const auto& r : rows) {
    table.AddRow({fmt::format("{:.0f}", r.clock.value()),
                  fmt::format("{:.0f}", r.prefill.power.value()), Pct(-r.prefill.power_cut),
                  Pct(r.prefill.slowdown), Pct(r.prefill.energy_rel - 1),
                  fmt::format("{:.0f}", r.decode.power.value()), Pct(-r.decode.power_cut),
                  Pct(r.decode.slowdown), Pct(r.decode.energy_rel - 1)});
  }
  return table.Render(style);
}

std::string LimitTable(const std::vector<model::SweepRow>& rows, const format::TextStyle& style) {
  format::TextTable table({{"LIMIT W"},
                           {"PREFILL MHz"},
                           {"PREFILL W"},
                           {"PREFILL TIME"},
                           {"DECODE MHz"},
                           {"DECODE W"},
                           {"DECODE TIME"}});
  for (const auto& r : rows) {
    table.AddRow({fmt::format("{:.0f}", r.limit.value()),
                  fmt::format("{:.0f}", r.prefill.clock.value()),
                  PowerUnder(r.prefill, r.limit, style), Pct(r.prefill.slowdown),
                  fmt::format("{:.0f}", r.decode.clock.value()),
                  PowerUnder(r.decode, r.limit, style), Pct(r.decode.slowdown)});
  }
  return table.Render(style) + "(! = above the limit even at the lowest clock)\n";
}

}  // namespace

ordered_json DvfsJson(const DvfsCharacterization& c) {
  const model::GpuSpec& gpu = *c.gpu;
  ordered_json out;
  out["gpu"] = gpu.name;
  out["tdp_w"] = gpu.tdp.value();
  out["idle_power_w"] = gpu.idle_power.value();
  for (const auto& r : c.clock_rows) {
    out["clock_sweep"].push_back({{"sm_clock_mhz", r.clock.value()},
                                  {"prefill", OutcomeJson(r.prefill)},
                                  {"decode", OutcomeJson(r.decode)}});
  }
  for (const auto& r : c.limit_rows) {
    out["power_limit_sweep"].push_back({{"power_limit_w", r.limit.value()},
                                        {"prefill", OutcomeJson(r.prefill)},
                                        {"decode", OutcomeJson(r.decode)}});
  }
  const gpu::sim::CapVersusLock& b = c.burst;
  out["burst"] = {
      {"length_s", core::ToSeconds(b.burst)},
      {"cap_w", b.cap.value()},
      {"lock_mhz", b.lock.value()},
      {"capped",
       {{"peak_w", b.capped.peak.value()},
        {"mean_w", b.capped.mean.value()},
        {"above_cap_s", core::ToSeconds(b.capped.above_limit)}}},
      {"locked", {{"peak_w", b.locked.peak.value()}, {"mean_w", b.locked.mean.value()}}}};
  return out;
}

std::string DvfsText(const DvfsCharacterization& c, const format::TextStyle& style) {
  const model::GpuSpec& gpu = *c.gpu;
  const gpu::sim::CapVersusLock& b = c.burst;
  return fmt::format(
             "Simulated {} ({}, TDP {:.0f} W, idle {:.0f} W): a prefill-like phase (2048 tokens, "
             "compute-bound) and a decode-like step (batch 16, memory-bound) of llama2-70b at "
             "TP8.\n\n",
             gpu.name, gpu.nvml_name, gpu.tdp.value(), gpu.idle_power.value()) +
         "Under an SM clock lock (changes relative to the maximum clock):\n" +
         ClockTable(c.clock_rows, style) + "\n" +
         "Under a power limit (steady state: the firmware lowers the clock until power fits):\n" +
         LimitTable(c.limit_rows, style) + "\n" +
         fmt::format(
             "A {:.0f} ms prefill burst from idle: under a {:.0f} W power cap it peaks at {:.0f} W "
             "and spends {:.0f} ms above the cap (capping is reactive); with the clock locked at "
             "{:.0f} MHz, which holds steady prefill under {:.0f} W, it peaks at {:.0f} W "
             "(locking is proactive).\n",
             core::ToSeconds(b.burst) * 1000, b.cap.value(), b.capped.peak.value(),
             core::ToSeconds(b.capped.above_limit) * 1000, b.lock.value(), b.cap.value(),
             b.locked.peak.value());
}

}  // namespace headroom::report
