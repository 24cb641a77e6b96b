// `headroom model dvfs`: characterize a simulated GPU type from the calibrated power model:
// prefill-like vs decode-like work across SM clocks and power limits, and how a power cap
// (reactive) and a clock lock (proactive) treat a prefill burst.
#include <cmath>
#include <iostream>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/terminal.h"
#include "core/parse.h"
#include "gpu/sim/burst_probe.h"
#include "model/dvfs_sweep.h"
#include "report/table.h"

namespace headroom::cli {
namespace {

using nlohmann::ordered_json;
using Align = report::TextTable::Align;

// Share of TDP used as the example cap in the burst comparison: POLCA's T1 level (brief §3).
constexpr double kBurstCapShareOfTdp = 0.75;
constexpr core::Duration kBurstLength = std::chrono::milliseconds(200);

struct DvfsOptions {
  std::string gpu = "a100-80gb-sxm";
  std::string sm_clocks;     // empty: 60%..100% of the maximum clock
  std::string power_limits;  // empty: the settable range
  bool json = false;
};

// `count` evenly spaced values from lo to hi, spaced by a multiple of `grain`, highest first.
std::vector<double> Spread(double lo, double hi, int count, double grain) {
  const double step = std::max(grain, std::round((hi - lo) / count / grain) * grain);
  std::vector<double> values;
  for (double v = hi; v >= lo - 1e-9; v -= step) values.push_back(v);
  return values;
}

core::Result<std::vector<core::Megahertz>> Clocks(const model::GpuSpec& spec,
                                                  const std::string& text) {
  if (!text.empty()) return ParseClockList(text, spec);
  std::vector<core::Megahertz> clocks;
  for (double v : Spread(spec.sm_clock_max.value() * 0.6, spec.sm_clock_max.value(), 8,
                         spec.sm_clock_step.value() * 5)) {
    clocks.push_back(spec.SnapClock(core::Megahertz(v)));
  }
  return clocks;
}

core::Result<std::vector<core::Watts>> Limits(const model::GpuSpec& spec, const std::string& text) {
  if (!text.empty()) return ParsePowerLimitList(text, spec);
  std::vector<core::Watts> limits;
  for (double v : Spread(spec.power_limit_min.value(), spec.power_limit_max.value(), 6, 25)) {
    limits.emplace_back(v);
  }
  return limits;
}

std::string Pct(double fraction) { return report::FormatChange(fraction); }

// Power with a '!' where even the lowest clock cannot bring it under the limit, else a space, so
// the digits of a right-aligned column line up.
std::string PowerUnder(const model::PhaseOutcome& o, core::Watts limit) {
  const std::string power = fmt::format("{:.0f}", o.power.value());
  return o.power > limit + core::Watts(0.5) ? StdoutStyle().Red(power + "!") : power + " ";
}

ordered_json OutcomeJson(const model::PhaseOutcome& o) {
  return {
      {"sm_clock_mhz", o.clock.value()}, {"power_w", o.power.value()}, {"time_s", o.time_s},
      {"energy_j", o.energy.value()},    {"slowdown", o.slowdown},     {"power_cut", o.power_cut},
      {"energy_rel", o.energy_rel}};
}

std::string ClockTable(const std::vector<model::SweepRow>& rows) {
  report::TextTable table({{"SM MHz"},
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
  return table.Render(StdoutStyle());
}

std::string LimitTable(const std::vector<model::SweepRow>& rows) {
  report::TextTable table({{"LIMIT W"},
                           {"PREFILL MHz"},
                           {"PREFILL W"},
                           {"PREFILL TIME"},
                           {"DECODE MHz"},
                           {"DECODE W"},
                           {"DECODE TIME"}});
  for (const auto& r : rows) {
    table.AddRow({fmt::format("{:.0f}", r.limit.value()),
                  fmt::format("{:.0f}", r.prefill.clock.value()), PowerUnder(r.prefill, r.limit),
                  Pct(r.prefill.slowdown), fmt::format("{:.0f}", r.decode.clock.value()),
                  PowerUnder(r.decode, r.limit), Pct(r.decode.slowdown)});
  }
  return table.Render(StdoutStyle()) + "(! = above the limit even at the lowest clock)\n";
}

int RunDvfs(const GlobalOptions& global, const DvfsOptions& options) {
  auto catalog = LoadCatalog(global);
  if (!catalog) return ReportError(catalog.error());
  auto spec = catalog->Gpu(options.gpu);
  if (!spec) return ReportError(spec.error().WithContext("--gpu"));
  const model::GpuSpec& gpu = **spec;
  auto clocks = Clocks(gpu, options.sm_clocks);
  if (!clocks) return ReportError(clocks.error());
  auto limits = Limits(gpu, options.power_limits);
  if (!limits) return ReportError(limits.error());

  const model::GpuPowerModel model(gpu);
  const auto clock_rows = model::SweepClocks(model, *clocks);
  const auto limit_rows = model::SweepPowerLimits(model, *limits);

  const core::Watts cap = gpu.tdp * kBurstCapShareOfTdp;
  const core::Megahertz fit =
      model.MaxClockUnder(cap, model::PrefillLikePhase(), 1.0, gpu.sm_clock_max);
  const auto burst = *gpu::sim::LoadScript::Parse("prefill:200ms,idle:800ms");
  const auto capped = gpu::sim::ProbeBurst(gpu, burst, cap, std::nullopt, kBurstLength);
  const auto locked = gpu::sim::ProbeBurst(gpu, burst, std::nullopt,
                                           gpu::ClockLock{gpu.sm_clock_min, fit}, kBurstLength);

  if (options.json) {
    ordered_json out;
    out["gpu"] = gpu.name;
    out["tdp_w"] = gpu.tdp.value();
    out["idle_power_w"] = gpu.idle_power.value();
    for (const auto& r : clock_rows) {
      out["clock_sweep"].push_back({{"sm_clock_mhz", r.clock.value()},
                                    {"prefill", OutcomeJson(r.prefill)},
                                    {"decode", OutcomeJson(r.decode)}});
    }
    for (const auto& r : limit_rows) {
      out["power_limit_sweep"].push_back({{"power_limit_w", r.limit.value()},
                                          {"prefill", OutcomeJson(r.prefill)},
                                          {"decode", OutcomeJson(r.decode)}});
    }
    out["burst"] = {{"length_s", core::ToSeconds(kBurstLength)},
                    {"cap_w", cap.value()},
                    {"lock_mhz", fit.value()},
                    {"capped",
                     {{"peak_w", capped.peak.value()},
                      {"mean_w", capped.mean.value()},
                      {"above_cap_s", core::ToSeconds(capped.above_limit)}}},
                    {"locked", {{"peak_w", locked.peak.value()}, {"mean_w", locked.mean.value()}}}};
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::cout << fmt::format(
      "Simulated {} ({}, TDP {:.0f} W, idle {:.0f} W): a prefill-like phase (2048 tokens, "
      "compute-bound) and a decode-like step (batch 16, memory-bound) of llama2-70b at TP8.\n\n",
      gpu.name, gpu.nvml_name, gpu.tdp.value(), gpu.idle_power.value());
  std::cout << "Under an SM clock lock (changes relative to the maximum clock):\n"
            << ClockTable(clock_rows) << "\n";
  std::cout << "Under a power limit (steady state: the firmware lowers the clock until power "
               "fits):\n"
            << LimitTable(limit_rows) << "\n";
  std::cout << fmt::format(
      "A {:.0f} ms prefill burst from idle: under a {:.0f} W power cap it peaks at {:.0f} W and "
      "spends {:.0f} ms above the cap (capping is reactive); with the clock locked at {:.0f} MHz, "
      "which holds steady prefill under {:.0f} W, it peaks at {:.0f} W (locking is proactive).\n",
      core::ToSeconds(kBurstLength) * 1000, cap.value(), capped.peak.value(),
      core::ToSeconds(capped.above_limit) * 1000, fit.value(), cap.value(), locked.peak.value());
  return kExitOk;
}

}  // namespace

void RegisterModel(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  CLI::App* model =
      app.add_subcommand("model", "Query the calibrated GPU power and performance model");
  model->require_subcommand(1);
  auto options = std::make_shared<DvfsOptions>();
  CLI::App* dvfs = model->add_subcommand(
      "dvfs", "Power, time and energy of prefill vs decode across SM clocks and power limits");
  dvfs->add_option("--gpu", options->gpu, "GPU type (catalog name or alias)")
      ->capture_default_str();
  dvfs->add_option("--sm-clocks", options->sm_clocks,
                   "Clocks to lock, MHz: START:STOP:STEP or a list (default 60-100% of max)");
  dvfs->add_option("--power-limits", options->power_limits,
                   "Power limits, W: START:STOP:STEP or a list (default: the settable range)");
  dvfs->add_flag("--json", options->json, "Print JSON instead of tables");
  dvfs->callback(
      [run, options, &global] { *run = [options, &global] { return RunDvfs(global, *options); }; });
  AddModelFit(model, global, run);
  AddModelPredict(model, global, run);
}

}  // namespace headroom::cli
