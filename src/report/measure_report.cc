#include "report/measure_report.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "format/table.h"
#include "report/measure_dir.h"

namespace headroom::report {
namespace {

using ordered_json = nlohmann::ordered_json;

std::optional<double> OptionalJoules(const std::optional<core::Joules>& j) {
  return j ? std::optional<double>(j->value()) : std::nullopt;
}

struct PhaseTotal {
  double duration_s = 0;
  double energy_j = 0;
};

// Phase energy summed over GPUs (durations are the same on every GPU), in first-seen order.
std::vector<std::pair<std::string, PhaseTotal>> PhaseTotals(const MeasureSummary& s) {
  std::vector<std::pair<std::string, PhaseTotal>> out;
  for (const MeasuredGpu& g : s.gpus) {
    for (const telemetry::PhaseEnergy& p : g.phases) {
      auto it =
          std::find_if(out.begin(), out.end(), [&](const auto& e) { return e.first == p.name; });
      if (it == out.end()) {
        out.push_back({p.name, {core::ToSeconds(p.duration), 0}});
        it = out.end() - 1;
      }
      it->second.energy_j += p.energy.value();
    }
  }
  return out;
}

double WorkIn(const MeasureSummary& s, const std::string& phase) {
  for (const auto& [name, units] : s.work_by_phase) {
    if (name == phase) return units;
  }
  return 0;
}

double TotalEnergy(const MeasureSummary& s) {
  double total = 0;
  for (const MeasuredGpu& g : s.gpus) total += g.energy.energy.value();
  return total;
}

}  // namespace

namespace {

MeasureReport::Gpu MeasuredGpuOf(const MeasuredGpu& g) {
  const telemetry::EnergyReport& e = g.energy;
  return {.index = g.info.index,
          .uuid = g.info.uuid,
          .name = g.info.name,
          .energy_j = e.energy.value(),
          .energy_source = telemetry::EnergySourceName(e.source),
          .energy_source_note = e.source_note,
          .counter_energy_j = OptionalJoules(e.counter_energy),
          .integrated_energy_j = OptionalJoules(e.integrated_energy),
          .counter_vs_integration = e.disagreement,
          .counter_update_period_s =
              e.counter_update_period
                  ? std::optional<double>(core::ToSeconds(*e.counter_update_period))
                  : std::nullopt,
          .counter_update_period_is_upper_bound = e.counter_update_period_is_upper_bound,
          .counter_resets = e.counter_resets,
          .power_reading = e.power_reading,
          .duration_s = core::ToSeconds(e.duration),
          .avg_power_w = e.average_power.value(),
          .peak_power_w = e.peak_power.value(),
          .capped_s = core::ToSeconds(e.time_power_capped),
          .throttled_s = core::ToSeconds(e.time_throttled),
          .samples = e.samples,
          .driver_power_samples = e.driver_samples};
}

// The summary as summary.json keeps it.
MeasureReport MeasureReportOf(const MeasureSummary& s) {
  MeasureReport m;
  m.command = s.command;
  m.exit_code = s.exit_code;
  m.backend = s.backend;
  m.error = s.error;
  m.duration_s = s.duration_s;
  for (const MeasuredGpu& g : s.gpus) {
    m.gpus.push_back(MeasuredGpuOf(g));
    m.peak_power_sum_w += g.energy.peak_power.value();
  }
  m.energy_j = TotalEnergy(s);
  m.avg_power_w = s.duration_s > 0 ? m.energy_j / s.duration_s : 0.0;
  if (s.work > 0) {
    m.work = MeasureReport::Work{.units = s.work,
                                 .unit = s.unit,
                                 .throughput_per_s = s.duration_s > 0 ? s.work / s.duration_s : 0.0,
                                 .energy_per_unit_j = m.energy_j / s.work};
  }
  for (const auto& [name, t] : PhaseTotals(s)) {
    const double work = WorkIn(s, name);
    m.phases.push_back(
        {.name = name,
         .duration_s = t.duration_s,
         .energy_j = t.energy_j,
         .avg_power_w = t.duration_s > 0 ? t.energy_j / t.duration_s : 0.0,
         .work = work,
         .energy_per_unit_j = work > 0 ? std::optional<double>(t.energy_j / work) : std::nullopt});
  }
  return m;
}

}  // namespace

ordered_json MeasureJson(const MeasureSummary& s) { return MeasureReportJson(MeasureReportOf(s)); }

std::string MeasureText(const MeasureSummary& s, const format::TextStyle& style) {
  using Align = format::TextTable::Align;
  format::TextTable gpus({{"GPU"},
                          {"ENERGY J"},
                          {"SOURCE", Align::kLeft},
                          {"AVG W"},
                          {"PEAK W"},
                          {"CAPPED s"},
                          {"THROTTLED s"},
                          {"COUNTER vs INTEGRAL"}});
  for (const MeasuredGpu& g : s.gpus) {
    const telemetry::EnergyReport& e = g.energy;
    gpus.AddRow({std::to_string(g.info.index), fmt::format("{:.1f}", e.energy.value()),
                 telemetry::EnergySourceName(e.source),
                 fmt::format("{:.1f}", e.average_power.value()),
                 fmt::format("{:.1f}", e.peak_power.value()),
                 fmt::format("{:.2f}", core::ToSeconds(e.time_power_capped)),
                 fmt::format("{:.2f}", core::ToSeconds(e.time_throttled)),
                 e.disagreement ? fmt::format("{:.2f}%", *e.disagreement * 100) : "-"});
  }
  const double total = TotalEnergy(s);
  std::string out =
      style.Bold(fmt::format("Measured {:.2f} s of '{}' (exit code {}) on {} GPU(s):", s.duration_s,
                             fmt::join(s.command, " "), s.exit_code, s.gpus.size())) +
      "\n";
  out += gpus.Render(style);
  out += fmt::format("Total: {:.1f} J, {:.1f} W on average.\n", total,
                     s.duration_s > 0 ? total / s.duration_s : 0.0);
  for (const MeasuredGpu& g : s.gpus) {
    if (!g.energy.source_note.empty()) {
      out += fmt::format("GPU {}: energy {}: {}.\n", g.info.index,
                         telemetry::EnergySourceName(g.energy.source), g.energy.source_note);
    }
  }
  if (s.work > 0) {
    out += fmt::format("Work: {:g} {}: {:.2f} per second, {:.4g} J each.\n", s.work, s.unit,
                       s.duration_s > 0 ? s.work / s.duration_s : 0.0, total / s.work);
  }
  const auto phases = PhaseTotals(s);
  if (!phases.empty()) {
    format::TextTable table(
        {{"PHASE", Align::kLeft}, {"TIME s"}, {"ENERGY J"}, {"AVG W"}, {"WORK"}, {"J/UNIT"}});
    for (const auto& [name, t] : phases) {
      const double work = WorkIn(s, name);
      table.AddRow({name, fmt::format("{:.2f}", t.duration_s), fmt::format("{:.1f}", t.energy_j),
                    fmt::format("{:.1f}", t.duration_s > 0 ? t.energy_j / t.duration_s : 0.0),
                    fmt::format("{:g}", work),
                    work > 0 ? fmt::format("{:.4g}", t.energy_j / work) : "-"});
    }
    out += "By phase (all GPUs):\n" + table.Render(style);
  }
  if (s.error) out += style.Red(fmt::format("Incomplete: {}", *s.error)) + "\n";
  return out;
}

}  // namespace headroom::report
