#include "report/characterize_html.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "format/table.h"

namespace headroom::report {
namespace {

const SweepPoint* PointOf(const CharacterizeReport& r, const std::string& setting) {
  for (const SweepPoint& p : r.points) {
    if (p.setting == setting) return &p;
  }
  return nullptr;
}

// The prefill and decode spans of one setting's power trace (inference sweeps).
std::vector<PhaseSpan> InferencePhases(const CharacterizeReport& r, const std::string& setting) {
  const SweepPoint* p = r.inference() ? PointOf(r, setting) : nullptr;
  if (p == nullptr) return {};
  return {{"prefill", 0, p->prefill_s},
          {"decode", p->prefill_s, std::numeric_limits<double>::infinity()}};
}

// Power and latency against one knob, each sorted by the knob's value.
void KnobPlots(const CharacterizeReport& r, SweptKnob knob,
               std::vector<format::CaptionedPlot>& plots) {
  const bool clock = knob == SweptKnob::kClockLock;
  const char* axis = clock ? "SM clock lock (MHz)" : "power limit per GPU (W)";
  const char* stem = clock ? "clock" : "limit";
  const SweepPoint* base = PointOf(r, "default");
  format::Series peak{.label = "peak power"}, mean{.label = "mean power"},
      latency{.label = "latency"};
  for (const SweepPoint& p : r.points) {
    if (p.knob != knob) continue;
    peak.points.emplace_back(p.value, p.peak_power_w);
    mean.points.emplace_back(p.value, p.mean_power_w);
    latency.points.emplace_back(p.value, p.latency_s);
  }
  if (peak.points.empty()) return;
  for (format::Series* s : {&peak, &mean, &latency}) std::sort(s->points.begin(), s->points.end());
  const double x0 = peak.points.front().first, x1 = peak.points.back().first;
  format::Plot power{
      .name = fmt::format("power-vs-{}", stem),
      .title = fmt::format("Power per GPU against the {}", clock ? "SM clock lock" : "power limit"),
      .x_label = axis,
      .y_label = "power per GPU (W)",
      .series = {peak, mean},
      .y_min = 0.0};
  const std::string what = r.inference() ? "one request" : "one iteration";
  format::Plot lat{
      .name = fmt::format("latency-vs-{}", stem),
      .title = fmt::format("Latency against the {}", clock ? "SM clock lock" : "power limit"),
      .x_label = axis,
      .y_label = fmt::format("latency of {} (s)", what),
      .series = {latency},
      .y_min = 0.0};
  if (base != nullptr) {
    const auto level = [&](std::string label, double y) {
      return format::Series{.label = std::move(label),
                            .points = {{x0, y}, {x1, y}},
                            .style = format::Style::kLines,
                            .dashed = true};
    };
    power.series.push_back(level("default, peak", base->peak_power_w));
    lat.series.push_back(level("default", base->latency_s));
    lat.series.push_back(level(fmt::format("SLO ({})", format::FormatChange(r.inputs.slo_fraction)),
                               base->latency_s * (1 + r.inputs.slo_fraction)));
  }
  plots.push_back({std::move(power),
                   fmt::format("Peak and mean power per GPU of the largest shape ({}) under "
                               "each {} swept; the dashed line is the default setting's peak.",
                               r.shape.empty() ? "the training iterations" : r.shape,
                               clock ? "clock lock" : "power limit")});
  plots.push_back(
      {std::move(lat), fmt::format("Latency of {} of the largest shape under each {}; above the "
                                   "upper dashed line the setting breaks the SLO.",
                                   what, clock ? "clock lock" : "power limit")});
}

format::CaptionedPlot ParetoPlot(const CharacterizeReport& r) {
  format::Series all{.label = "settings", .style = format::Style::kPoints};
  for (const SweepPoint& p : r.points) all.points.emplace_back(p.latency_s, p.energy_per_unit_j);
  format::Series front{.label = "Pareto front", .points = ParetoFront(all.points)};
  const char* unit = r.inference() ? "output token" : "training token";
  return {
      format::Plot{.name = "pareto",
                   .title = fmt::format("Energy per {} against latency", unit),
                   .x_label = r.inference() ? "latency of one request (s)" : "iteration time (s)",
                   .y_label = fmt::format("energy per {}, all GPUs (J)", unit),
                   .series = {all, front}},
      fmt::format("Every setting on the largest shape. The line joins the settings no other "
                  "setting beats on both latency and energy per {}: the only ones worth "
                  "choosing; the rest spend more energy for no speed.",
                  unit)};
}

format::CaptionedPlot PowerOverTime(const CharacterizeReport& r) {
  format::Plot plot{.name = "power-over-time",
                    .title = r.inference() ? "Power over one request: prefill, then decode"
                                           : "Power over the training iterations",
                    .x_label = "time (s)",
                    .y_label = "power per GPU (W)",
                    .y_min = 0.0};
  for (const PowerTraceRun& t : r.traces) {
    const std::vector<PhaseSpan> spans = InferencePhases(r, t.setting);
    if (t.setting == "default" && !spans.empty()) {
      for (PhaseSeries& s : SplitByPhase(t.power, spans, "idle")) {
        plot.series.push_back({.label = fmt::format("default, {}", s.name),
                               .points = std::move(s.points),
                               .style = format::Style::kLines});
      }
    } else {
      plot.series.push_back({.label = t.setting,
                             .points = t.power,
                             .style = format::Style::kLines,
                             .dashed = t.setting != "default"});
    }
  }
  return {std::move(plot),
          r.inference()
              ? fmt::format("Sensor power per GPU, one reading per {}, over one request of the "
                            "largest shape ({}). Under the default setting the prefill and "
                            "decode phases are coloured apart; the dashed lines are the lowest "
                            "clock lock and power limit swept.",
                            r.inputs.interval, r.shape)
              : fmt::format("Sensor power per GPU, one reading per {}, over {} training "
                            "iterations: compute, then the dip of the gradient synchronization.",
                            r.inputs.interval, r.inputs.iterations)};
}

// Mean power in prefill and in decode per traced setting; nullopt for training.
struct PhasePower {
  std::string setting;
  double prefill_s = 0, decode_s = 0;
  std::optional<double> prefill_w = {}, decode_w = {};
};
std::vector<PhasePower> PhasePowers(const CharacterizeReport& r) {
  std::vector<PhasePower> out;
  for (const PowerTraceRun& t : r.traces) {
    const std::vector<PhaseSpan> spans = InferencePhases(r, t.setting);
    if (spans.empty()) continue;
    PhasePower p{.setting = t.setting,
                 .prefill_s = spans[0].end_s,
                 .decode_s = PointOf(r, t.setting)->latency_s - spans[0].end_s};
    for (const PhaseMean& m : MeanByPhase(t.power, spans, "idle")) {
      if (m.name == "prefill") p.prefill_w = m.mean;
      if (m.name == "decode") p.decode_w = m.mean;
    }
    out.push_back(p);
  }
  return out;
}

std::optional<format::CaptionedPlot> PhasePowerPlot(const CharacterizeReport& r) {
  const std::vector<PhasePower> phases = PhasePowers(r);
  if (phases.empty()) return std::nullopt;
  format::Plot plot{.name = "phase-power",
                    .title = "Mean power per GPU in prefill and in decode",
                    .x_label = "setting",
                    .y_label = "mean power per GPU (W)",
                    .y_min = 0.0,
                    .box_width = 0.35};
  format::Series prefill{.label = "prefill", .style = format::Style::kBoxes};
  format::Series decode{.label = "decode", .style = format::Style::kBoxes};
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const double x = static_cast<double>(i);
    plot.x_tics.emplace_back(x, phases[i].setting);
    if (phases[i].prefill_w) prefill.points.emplace_back(x - 0.18, *phases[i].prefill_w);
    if (phases[i].decode_w) decode.points.emplace_back(x + 0.18, *phases[i].decode_w);
  }
  plot.series = {prefill, decode};
  return format::CaptionedPlot{
      std::move(plot),
      "The mean of the sensor readings in each phase of one request of the "
      "largest shape: prefill is compute-bound and draws more power per GPU "
      "than the memory-bound decode. A phase shorter than the sampling interval "
      "has no reading and no bar."};
}

std::string Header(const CharacterizeReport& r) {
  return format::HtmlHeader(
      CharacterizeQuestion(r), CharacterizeAnswer(r),
      fmt::format("Simulated {} ({} settings); the best setting is the one with the "
                  "lowest peak power whose worst latency over all shapes stays "
                  "within the SLO.",
                  format::HtmlEscape(r.inputs.gpu), r.settings.size()));
}

std::string Inputs(const CharacterizeReport& r) {
  const CharacterizeInputs& in = r.inputs;
  std::vector<std::pair<std::string, std::string>> rows = {
      {"workload", in.workload}, {"model", in.model}, {"GPU", in.gpu}};
  if (r.inference()) {
    if (!in.engine.empty()) rows.push_back({"engine", in.engine});
    rows.push_back({"tensor parallelism", std::to_string(in.tp)});
    rows.push_back({"prompts", in.prompts});
    rows.push_back({"batches", in.batches});
    rows.push_back({"output tokens", std::to_string(in.output)});
    rows.push_back({"largest shape (plots)", r.shape});
  } else {
    rows.push_back({"iterations per run", std::to_string(in.iterations)});
  }
  std::vector<std::string> swept;
  for (const SettingVerdict& s : r.settings) swept.push_back(s.setting);
  rows.push_back({"settings", fmt::format("{}", fmt::join(swept, ", "))});
  rows.push_back({"sampling interval", in.interval});
  rows.push_back({"SLO", fmt::format("worst latency over all shapes within {} of the default",
                                     format::FormatChange(in.slo_fraction))});
  rows.push_back({"headroom", in.version});
  return format::HtmlInputs(rows);
}

std::string SettingsTable(const CharacterizeReport& r) {
  std::string out = "<section id=\"settings\">\n<h2>Settings</h2>\n<table class=\"settings\">\n" +
                    format::HtmlRow({"setting", "worst latency", "peak power", "energy per token",
                                     "SLO", "peak W", "mean W", "latency", "J per token"},
                                    "th");
  for (const SettingVerdict& s : r.settings) {
    const SweepPoint* p = PointOf(r, s.setting);
    const bool keeps = s.worst_latency_increase <= r.inputs.slo_fraction + 1e-9;
    out += format::HtmlRow(
        {s.setting, format::FormatChange(s.worst_latency_increase),
         format::FormatChange(s.peak_power_change), format::FormatChange(s.energy_change),
         keeps ? "kept" : "broken", p != nullptr ? fmt::format("{:.0f}", p->peak_power_w) : "-",
         p != nullptr ? fmt::format("{:.0f}", p->mean_power_w) : "-",
         p != nullptr ? format::FormatSeconds(p->latency_s) : "-",
         p != nullptr ? fmt::format("{:.3g}", p->energy_per_unit_j) : "-"},
        "td", s.setting == r.best ? "chosen" : nullptr);
  }
  return out +
         "</table>\n<p class=\"note\">Changes are against the default setting: the worst "
         "latency increase over every shape, the change of the highest peak, and of the mean "
         "energy per token. Watts, latency and energy are of the largest shape.</p>\n"
         "</section>\n";
}

std::string PhaseTable(const CharacterizeReport& r) {
  const std::vector<PhasePower> phases = PhasePowers(r);
  if (phases.empty()) return "";
  std::string out =
      "<section id=\"phases\">\n<h2>Prefill and decode</h2>\n<table>\n" +
      format::HtmlRow({"setting", "prefill", "prefill W", "decode", "decode W"}, "th");
  const auto watts = [](const std::optional<double>& w) {
    return w ? fmt::format("{:.0f}", *w) : std::string("-");
  };
  for (const PhasePower& p : phases) {
    out += format::HtmlRow({p.setting, format::FormatSeconds(p.prefill_s), watts(p.prefill_w),
                            format::FormatSeconds(p.decode_s), watts(p.decode_w)});
  }
  return out +
         "</table>\n<p class=\"note\">One request of the largest shape; mean sensor power per "
         "GPU in each phase (\"-\": the phase is shorter than the sampling interval).</p>\n"
         "</section>\n";
}

std::vector<format::CaptionedPlot> CharacterizePlots(const CharacterizeReport& r) {
  std::vector<format::CaptionedPlot> plots;
  KnobPlots(r, SweptKnob::kClockLock, plots);
  KnobPlots(r, SweptKnob::kPowerLimit, plots);
  plots.push_back(ParetoPlot(r));
  if (!r.traces.empty()) plots.push_back(PowerOverTime(r));
  if (auto p = PhasePowerPlot(r)) plots.push_back(std::move(*p));
  return plots;
}

format::HtmlReport CharacterizeReportHtml(const CharacterizeReport& r,
                                          const std::string& plot_dir) {
  format::HtmlReport out;
  const std::string body = Header(r) + Inputs(r) + SettingsTable(r) + PhaseTable(r) +
                           format::HtmlPlots(CharacterizePlots(r), plot_dir, out.warnings) +
                           format::HtmlFooter(r.inputs.version, "headroom characterize --out DIR");
  out.html = format::HtmlPage(fmt::format("headroom characterize: {} {} on {}", r.inputs.model,
                                          r.inputs.workload, r.inputs.gpu),
                              body);
  return out;
}

}  // namespace

core::Result<format::WrittenReport> WriteCharacterizeReport(const std::string& dir) {
  HEADROOM_ASSIGN_OR_RETURN(CharacterizeReport report, ReadCharacterizeDir(dir));
  return format::WriteReportPage(
      dir, [&](const std::string& plot_dir) { return CharacterizeReportHtml(report, plot_dir); });
}

}  // namespace headroom::report
