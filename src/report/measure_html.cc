#include "report/measure_html.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/reductions.h"

namespace headroom::report {
namespace {

// Samples before the first marker or after the program stopped marking.
constexpr const char* kUnmarked = "unmarked";

format::CaptionedPlot PowerPlot(const MeasureReport& m) {
  const std::string what = m.gpus.size() == 1 ? "GPU power" : "power of all GPUs";
  format::Plot plot{
      .name = "power",
      .title = fmt::format("{} over time{}", what, m.spans.empty() ? "" : ", by phase"),
      .x_label = "time since the command started (s)",
      .y_label = fmt::format("{} (W)", what),
      .y_min = 0.0};
  if (m.spans.empty()) {
    plot.series.push_back({.label = "power", .points = m.power, .style = format::Style::kLines});
  } else {
    for (PhaseSeries& s : SplitByPhase(m.power, m.spans, kUnmarked)) {
      plot.series.push_back(
          {.label = s.name, .points = std::move(s.points), .style = format::Style::kLines});
    }
  }
  return {std::move(plot),
          fmt::format("Sensor power, one reading per {}{}. {}", m.interval,
                      m.gpus.size() == 1 ? "" : " per GPU, summed over the GPUs",
                      m.spans.empty()
                          ? "The program marked no phases (write 'phase NAME' lines to "
                            "$HEADROOM_MARKERS to colour them apart)."
                          : "Each phase the program marked ('phase NAME' on $HEADROOM_MARKERS) "
                            "has its own colour; a phase that recurs is one colour throughout.")};
}

std::optional<format::CaptionedPlot> PhasePowerPlot(const MeasureReport& m) {
  if (m.phases.empty()) return std::nullopt;
  format::Plot plot{.name = "phase-power",
                    .title = "Mean power per phase",
                    .x_label = "phase",
                    .y_label = "mean power, all GPUs (W)",
                    .y_min = 0.0};
  format::Series bars{.label = "mean power", .style = format::Style::kBoxes};
  for (std::size_t i = 0; i < m.phases.size(); ++i) {
    const double x = static_cast<double>(i);
    bars.points.emplace_back(x, m.phases[i].avg_power_w);
    plot.x_tics.emplace_back(x, m.phases[i].name);
  }
  plot.series.push_back(std::move(bars));
  return format::CaptionedPlot{
      std::move(plot),
      "Each phase's energy over its duration, summed over the GPUs (from the "
      "energy meters, not the plotted readings)."};
}

std::string Header(const MeasureReport& m) {
  return format::HtmlHeader(
      MeasureQuestion(m), MeasureAnswer(m),
      fmt::format(
          "The command exited with {}.{}", m.exit_code,
          !m.error ? "" : format::HtmlEscape(" The measurement is incomplete: " + *m.error + ".")));
}

std::string Inputs(const MeasureReport& m) {
  std::vector<std::string> names;
  for (const MeasureReport::Gpu& g : m.gpus) names.push_back(fmt::format("{} {}", g.index, g.name));
  return format::HtmlInputs(
      {{"command", fmt::format("{}", fmt::join(m.command, " "))},
       {"backend", m.backend},
       {"GPUs", fmt::format("{}", fmt::join(names, ", "))},
       {"sampling interval", m.interval},
       {"work", m.work && m.work->units > 0 ? fmt::format("{:g} {}", m.work->units, m.work->unit)
                                            : "not reported"},
       {"headroom", m.version}});
}

std::string Tables(const MeasureReport& m) {
  std::string out = "<section id=\"gpus\">\n<h2>GPUs</h2>\n<table>\n" +
                    format::HtmlRow({"GPU", "energy", "source", "mean power", "peak power",
                                     "power-capped", "throttled"},
                                    "th");
  for (const MeasureReport::Gpu& g : m.gpus) {
    out += format::HtmlRow(
        {std::to_string(g.index), fmt::format("{:.1f} J", g.energy_j), g.energy_source,
         fmt::format("{:.1f} W", g.avg_power_w), fmt::format("{:.1f} W", g.peak_power_w),
         fmt::format("{:.2f} s", g.capped_s), fmt::format("{:.2f} s", g.throttled_s)});
  }
  out += "</table>\n</section>\n";
  if (m.phases.empty()) return out;
  out += "<section id=\"phases\">\n<h2>Phases</h2>\n<table class=\"phases\">\n" +
         format::HtmlRow({"phase", "duration", "energy", "mean power", "work", "J per unit"}, "th");
  for (const MeasureReport::Phase& p : m.phases) {
    out += format::HtmlRow(
        {p.name, fmt::format("{:.2f} s", p.duration_s), fmt::format("{:.1f} J", p.energy_j),
         fmt::format("{:.1f} W", p.avg_power_w),
         p.work > 0 ? fmt::format("{:g} {}", p.work, m.unit()) : "-",
         p.energy_per_unit_j ? fmt::format("{:.4g}", *p.energy_per_unit_j) : "-"});
  }
  return out +
         "</table>\n<p class=\"note\">Energy summed over the GPUs; a phase that recurs is "
         "summed over its stretches; work is what the program reported ('work N' on "
         "$HEADROOM_MARKERS, --work-regex) while the phase ran.</p>\n</section>\n";
}

std::vector<format::CaptionedPlot> MeasurePlots(const MeasureReport& m) {
  std::vector<format::CaptionedPlot> plots;
  plots.push_back(PowerPlot(m));
  if (auto p = PhasePowerPlot(m)) plots.push_back(std::move(*p));
  return plots;
}

format::HtmlReport MeasureReportHtml(const MeasureReport& m, const std::string& plot_dir) {
  format::HtmlReport out;
  const std::string body = Header(m) + Inputs(m) + Tables(m) +
                           format::HtmlPlots(MeasurePlots(m), plot_dir, out.warnings) +
                           format::HtmlFooter(m.version, "headroom measure --out DIR");
  out.html = format::HtmlPage(fmt::format("headroom measure: {}", fmt::join(m.command, " ")), body);
  return out;
}

}  // namespace

core::Result<format::WrittenReport> WriteMeasureReport(const std::string& dir) {
  HEADROOM_ASSIGN_OR_RETURN(MeasureReport report, ReadMeasureDir(dir));
  return format::WriteReportPage(
      dir, [&](const std::string& plot_dir) { return MeasureReportHtml(report, plot_dir); });
}

}  // namespace headroom::report
