#include "report/training_row_html.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include <fmt/format.h>

#include "core/parse.h"
#include "report/training_row_report.h"

namespace headroom::report {
namespace {

// The row power of one run over [from_s, to_s), means over `per` steps.
format::Series TrainingPowerSeries(const sim::MitigationOutcome& o, double from_s, double to_s,
                                   std::size_t per) {
  format::Series s{.label = o.mitigation.name, .style = format::Style::kLines, .line_width = 1.5};
  const sim::TrainingRowRun& r = o.run;
  const auto begin = static_cast<std::size_t>(std::max(0.0, from_s / r.step_s));
  const auto end = std::min(r.power_w.size(), static_cast<std::size_t>(to_s / r.step_s));
  for (std::size_t i = begin; i + per <= end; i += per) {
    double sum = 0;
    for (std::size_t k = i; k < i + per; ++k) sum += r.power_w[k];
    s.points.emplace_back(i * r.step_s, sum / per / 1e3);
  }
  return s;
}

format::CaptionedPlot IterationPlot(const sim::TrainingRowVerdict& v) {
  const sim::TrainingRowRun& base = v.outcomes.front().run;
  const std::vector<double>& ends = base.iteration_ends_s;
  const double period = base.iterations > 0 ? base.busy_s / base.iterations : 1;
  const double from = ends.size() > 4 ? ends[3] - period / 4 : 0;
  const double to = from + 3.5 * period;
  format::Plot plot{.name = "iterations",
                    .title = "Row power through a few iterations",
                    .x_label = "time (s)",
                    .y_label = "row power (kW)"};
  for (const sim::MitigationOutcome& o : v.outcomes) {
    plot.series.push_back(TrainingPowerSeries(o, from, to, 1));
  }
  return {std::move(plot),
          fmt::format("The row's power at every {} step: the compute phase's plateau, the dip "
                      "of the synchronization, and how each mitigation reshapes them.",
                      core::FormatDuration(v.scenario.step))};
}

std::optional<format::CaptionedPlot> CheckpointPlot(const sim::TrainingRowVerdict& v) {
  const sim::TrainingRowRun& base = v.outcomes.front().run;
  if (base.checkpoint_starts_s.empty()) return std::nullopt;
  const double start = base.checkpoint_starts_s.front();
  const double pause = core::ToSeconds(v.scenario.checkpoint_for);
  format::Plot plot{.name = "checkpoint",
                    .title = "Row power through the first checkpoint",
                    .x_label = "time (s)",
                    .y_label = "row power (kW)"};
  const auto per = static_cast<std::size_t>(
      std::max(1.0, std::round(kTrainingPowerPeriodS / std::max(base.step_s, 1e-9))));
  for (const sim::MitigationOutcome& o : v.outcomes) {
    plot.series.push_back(TrainingPowerSeries(o, start - 20, start + pause + 40, per));
  }
  return format::CaptionedPlot{
      std::move(plot),
      fmt::format("Means over {:g} s. The job stops for {} with its GPUs near idle, then "
                  "resumes: the row's largest single swing, whose edges the ramp limits slow.",
                  kTrainingPowerPeriodS, core::FormatDuration(v.scenario.checkpoint_for))};
}

format::CaptionedPlot SpectrumPlot(const sim::TrainingRowVerdict& v) {
  format::Plot plot{.name = "spectrum",
                    .title = "Swing spectrum of the row's power",
                    .x_label = "frequency (Hz)",
                    .y_label = "RMS swing per bin (kW)",
                    .y_min = 0,
                    .log_x = true};
  double top = 0;
  for (const sim::MitigationOutcome& o : v.outcomes) {
    const sim::Spectrum& s = o.run.spectrum;
    format::Series series{
        .label = o.mitigation.name, .style = format::Style::kLines, .line_width = 1.5};
    for (std::size_t k = 1; k < s.psd.size(); ++k) {
      const double rms_kw = std::sqrt(s.psd[k] * s.df_hz) / 1e3;
      series.points.emplace_back(k * s.df_hz, rms_kw);
      top = std::max(top, rms_kw);
    }
    plot.series.push_back(std::move(series));
  }
  const double gap = std::numeric_limits<double>::quiet_NaN();
  for (auto [label, lo, hi] :
       {std::tuple{"0.1-2 Hz band", sim::kLowBandLoHz, sim::kLowBandHiHz},
        std::tuple{"3-30 Hz band", sim::kHighBandLoHz, sim::kHighBandHiHz}}) {
    plot.series.push_back({.label = label,
                           .points = {{lo, 0}, {lo, top}, {lo, gap}, {hi, 0}, {hi, top}},
                           .style = format::Style::kLines,
                           .dashed = true,
                           .line_width = 1});
  }
  return {std::move(plot),
          "Welch spectrum of the row's power (Hann-windowed segments of up to 41 s, half "
          "overlapping), as the RMS of the swing in each frequency bin. Dashed: the edges of the "
          "grid's 0.1-2 Hz and 3-30 Hz bands. The iteration's fundamental and its harmonics "
          "stand out; the checkpoint's pause lies below 0.1 Hz."};
}

std::string MitigationTableHtml(const sim::TrainingRowVerdict& v) {
  std::string rows =
      format::HtmlRow({"mitigation", "avg kW", "peak kW", "ramp up kW/s", "ramp down kW/s",
                       "0.1-2 Hz kW", "3-30 Hz kW", "iter/h", "energy/iter", "within limits"},
                      "th");
  for (std::size_t i = 0; i < v.outcomes.size(); ++i) {
    const sim::MitigationOutcome& o = v.outcomes[i];
    const sim::TrainingRowRun& r = o.run;
    rows += format::HtmlRow(
        {o.mitigation.name, fmt::format("{:.1f}", r.average_w / 1e3),
         fmt::format("{:.1f}", r.peak_w / 1e3),
         fmt::format("{:.1f}", r.ramp_up_window_w_per_s / 1e3),
         fmt::format("{:.1f}", r.ramp_down_window_w_per_s / 1e3),
         fmt::format("{:.1f} ({:.0f}%)", r.low_band.amplitude_w / 1e3, 100 * r.low_band.share),
         fmt::format("{:.1f} ({:.0f}%)", r.high_band.amplitude_w / 1e3, 100 * r.high_band.share),
         fmt::format("{:.0f} ({:+.1f}%)", r.iterations_per_hour(), 100 * o.throughput_change),
         fmt::format("{:+.1f}%", 100 * o.energy_change),
         o.within() ? "yes" : "no: " + o.broken.front().text},
        "td", v.chosen == i ? "chosen" : nullptr);
  }
  return "<section id=\"mitigations\"><h2>Mitigations</h2><table>" + rows + "</table></section>";
}

}  // namespace

core::Result<format::WrittenReport> WriteTrainingRowReport(const std::string& dir,
                                                           const sim::TrainingRowVerdict& v,
                                                           const std::string& version) {
  return format::WriteReportPage(dir, [&v, &version](const std::string& plot_dir) {
    const sim::TrainingScenario& s = v.scenario;
    std::vector<format::CaptionedPlot> plots = {IterationPlot(v)};
    if (auto c = CheckpointPlot(v)) plots.push_back(std::move(*c));
    plots.push_back(SpectrumPlot(v));
    format::HtmlReport out;
    const std::string body =
        format::HtmlHeader(
            "Which mitigation keeps this training row's ramps and swings within the grid's "
            "limits, at the least cost?",
            TrainingAnswer(v),
            fmt::format("Scenario <b>{}</b>: {}.", format::HtmlEscape(s.name),
                        format::HtmlEscape(s.description))) +
        format::HtmlInputs(
            {{"scenario file", s.source},
             {"servers", fmt::format("{} x {} ({})", s.servers, s.server, v.gpu)},
             {"workload", s.workload},
             {"checkpoints",
              fmt::format("every {} for {}", core::FormatDuration(s.checkpoint_every),
                          core::FormatDuration(s.checkpoint_for))},
             {"simulated", fmt::format("{} at {} steps, seed {}", core::FormatDuration(s.duration),
                                       core::FormatDuration(s.step), s.seed)}}) +
        MitigationTableHtml(v) + format::HtmlPlots(plots, plot_dir, out.warnings) +
        format::HtmlFooter(version, "headroom simulate --config SCENARIO --report");
    out.html = format::HtmlPage("headroom training row: " + s.name, body);
    return out;
  });
}

}  // namespace headroom::report
