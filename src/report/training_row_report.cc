#include "report/training_row_report.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/parse.h"
#include "format/table.h"

namespace headroom::report {
namespace {

std::string SignedPercent(double change) { return fmt::format("{:+.1f}%", 100 * change); }

std::string KwText(double w) { return fmt::format("{:.1f}", w / 1e3); }

const char* KindName(sim::MitigationKind k) {
  switch (k) {
    case sim::MitigationKind::kNone:
      return "none";
    case sim::MitigationKind::kClockLock:
      return "clock-lock";
    case sim::MitigationKind::kPowerSmoothing:
      return "power-smoothing";
  }
  return "none";
}

nlohmann::ordered_json BandJson(const sim::BandSwing& b) {
  return {{"lo_hz", b.lo_hz},
          {"hi_hz", b.hi_hz},
          {"share", b.share},
          {"rms_w", b.rms_w},
          {"amplitude_w", b.amplitude_w}};
}

nlohmann::ordered_json MitigationJson(const sim::Mitigation& m) {
  nlohmann::ordered_json j = {{"name", m.name}, {"kind", KindName(m.kind)}};
  if (m.kind == sim::MitigationKind::kClockLock) j["clock_mhz"] = m.clock_mhz;
  if (m.kind == sim::MitigationKind::kPowerSmoothing) {
    j["floor_pct"] = m.floor_pct;
    j["ramp_up_w_per_s"] = m.ramp_up_w_per_s;
    j["ramp_down_w_per_s"] = m.ramp_down_w_per_s;
    j["ramp_down_hysteresis_s"] = core::ToSeconds(m.ramp_down_hysteresis);
  }
  return j;
}

nlohmann::ordered_json MitigationOutcomeJson(const sim::MitigationOutcome& o) {
  const sim::TrainingRowRun& r = o.run;
  nlohmann::ordered_json broken = nlohmann::ordered_json::array();
  for (const sim::BrokenLimit& b : o.broken)
    broken.push_back({{"limit", b.limit}, {"text", b.text}});
  return {{"mitigation", MitigationJson(o.mitigation)},
          {"iterations", r.iterations},
          {"iterations_per_hour", r.iterations_per_hour()},
          {"throughput_change", o.throughput_change},
          {"energy_per_iteration_j", r.energy_per_iteration_j()},
          {"energy_change", o.energy_change},
          {"average_w", r.average_w},
          {"peak_w", r.peak_w},
          {"minimum_w", r.minimum_w},
          {"ramp_up_step_w_per_s", r.ramp_up_step_w_per_s},
          {"ramp_down_step_w_per_s", r.ramp_down_step_w_per_s},
          {"ramp_up_window_w_per_s", r.ramp_up_window_w_per_s},
          {"ramp_down_window_w_per_s", r.ramp_down_window_w_per_s},
          {"low_band", BandJson(r.low_band)},
          {"high_band", BandJson(r.high_band)},
          {"spectrum_segments", r.spectrum.segments},
          {"within_limits", o.within()},
          {"broken", broken}};
}

nlohmann::ordered_json LimitsJson(const sim::TrainingLimits& l) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  auto put = [&j](const char* key, const std::optional<double>& v) {
    if (v) j[key] = *v;
  };
  put("max_ramp_w_per_s", l.max_ramp_w_per_s);
  put("max_low_band_share", l.max_low_band_share);
  put("max_high_band_share", l.max_high_band_share);
  put("max_low_band_amplitude_w", l.max_low_band_amplitude_w);
  put("max_high_band_amplitude_w", l.max_high_band_amplitude_w);
  return j;
}

}  // namespace

std::string TrainingAnswer(const sim::TrainingRowVerdict& v) {
  if (!v.chosen) {
    return fmt::format("no mitigation keeps the row within its limits: none meets {}",
                       fmt::join(v.unmet, ", "));
  }
  const sim::MitigationOutcome& o = v.outcomes[*v.chosen];
  if (*v.chosen == 0) return "the row is within its limits with no mitigation";
  return fmt::format(
      "{} keeps the row within its limits at {} iterations per hour and {} energy per iteration",
      o.mitigation.name, SignedPercent(o.throughput_change), SignedPercent(o.energy_change));
}

std::string TrainingRowText(const sim::TrainingRowVerdict& v, const format::TextStyle& style) {
  const sim::TrainingScenario& s = v.scenario;
  std::string out = fmt::format("{}: {} x {} ({} x 8 {}), {} for {}; step {}, ramps over {}\n\n",
                                s.name, s.servers, s.server, s.servers, v.gpu, s.workload,
                                core::FormatDuration(s.duration), core::FormatDuration(s.step),
                                core::FormatDuration(s.ramp_window));
  using Align = format::TextTable::Align;
  format::TextTable t({{"mitigation", Align::kLeft},
                       {"avg kW"},
                       {"peak kW"},
                       {"ramp up/down kW/s"},
                       {"per step kW/s"},
                       {"0.1-2 Hz share, kW"},
                       {"3-30 Hz share, kW"},
                       {"iter/h"},
                       {"energy/iter"},
                       {"within", Align::kLeft}});
  for (std::size_t i = 0; i < v.outcomes.size(); ++i) {
    const sim::MitigationOutcome& o = v.outcomes[i];
    const sim::TrainingRowRun& r = o.run;
    t.AddRow(
        {o.mitigation.name, KwText(r.average_w), KwText(r.peak_w),
         KwText(r.ramp_up_window_w_per_s) + " / " + KwText(r.ramp_down_window_w_per_s),
         fmt::format("{:.0f} / {:.0f}", r.ramp_up_step_w_per_s / 1e3,
                     r.ramp_down_step_w_per_s / 1e3),
         fmt::format("{:.0f}%, {}", 100 * r.low_band.share, KwText(r.low_band.amplitude_w)),
         fmt::format("{:.0f}%, {}", 100 * r.high_band.share, KwText(r.high_band.amplitude_w)),
         fmt::format("{:.0f} ({})", r.iterations_per_hour(), SignedPercent(o.throughput_change)),
         SignedPercent(o.energy_change), o.within() ? "yes" : "no"},
        v.chosen == i ? format::Tone::kGreen : format::Tone::kPlain);
  }
  out += t.Render(style);
  for (const sim::MitigationOutcome& o : v.outcomes) {
    for (const sim::BrokenLimit& b : o.broken)
      out += fmt::format("  {}: {}\n", o.mitigation.name, b.text);
  }
  return out + "\n" + TrainingAnswer(v) + "\n";
}

nlohmann::ordered_json TrainingRowJson(const sim::TrainingRowVerdict& v,
                                       const std::string& version) {
  const sim::TrainingScenario& s = v.scenario;
  nlohmann::ordered_json outcomes = nlohmann::ordered_json::array();
  for (const sim::MitigationOutcome& o : v.outcomes) outcomes.push_back(MitigationOutcomeJson(o));
  return {{"kind", "training-row"},
          {"version", version},
          {"scenario", {{"name", s.name}, {"description", s.description}, {"source", s.source}}},
          {"server", s.server},
          {"servers", s.servers},
          {"gpu", v.gpu},
          {"workload", s.workload},
          {"checkpoint_every_s", core::ToSeconds(s.checkpoint_every)},
          {"checkpoint_for_s", core::ToSeconds(s.checkpoint_for)},
          {"skew_s", core::ToSeconds(s.skew)},
          {"step_s", core::ToSeconds(s.step)},
          {"duration_s", core::ToSeconds(s.duration)},
          {"ramp_window_s", core::ToSeconds(s.ramp_window)},
          {"seed", s.seed},
          {"limits", LimitsJson(s.limits)},
          {"mitigations", outcomes},
          {"chosen", v.chosen ? nlohmann::ordered_json(v.outcomes[*v.chosen].mitigation.name)
                              : nlohmann::ordered_json(nullptr)},
          {"unmet", v.unmet},
          {"answer", TrainingAnswer(v)}};
}

std::string TrainingPowerCsv(const sim::TrainingRowVerdict& v) {
  std::string out = "time_s";
  for (const sim::MitigationOutcome& o : v.outcomes) out += ",\"" + o.mitigation.name + " W\"";
  out += "\n";
  const sim::TrainingRowRun& first = v.outcomes.front().run;
  const auto per = static_cast<std::size_t>(
      std::max(1.0, std::round(kTrainingPowerPeriodS / std::max(first.step_s, 1e-9))));
  for (std::size_t i = 0; i + per <= first.power_w.size(); i += per) {
    out += fmt::format("{:.3f}", i * first.step_s);
    for (const sim::MitigationOutcome& o : v.outcomes) {
      double sum = 0;
      for (std::size_t k = i; k < i + per && k < o.run.power_w.size(); ++k) sum += o.run.power_w[k];
      out += fmt::format(",{:.1f}", sum / per);
    }
    out += "\n";
  }
  return out;
}

}  // namespace headroom::report
