#include "report/model_fit_report.h"

#include <fmt/format.h>

#include "format/table.h"

namespace headroom::report {
namespace {

using ordered_json = nlohmann::ordered_json;

std::string Percent(double fraction) { return fmt::format("{:.1f}%", fraction * 100); }

ordered_json GpuFitJson(const model::GpuProfileFit& r) {
  const model::InferenceEfficiency& e = r.fit.efficiency;
  return {{"gpu", r.gpu->name},
          {"profile_hardware", r.profile_hardware},
          {"compute_efficiency", e.compute_efficiency},
          {"half_efficiency_width", e.half_efficiency_width},
          {"memory_efficiency", e.memory_efficiency},
          {"prefill_layer_overhead_ms", e.prefill_layer_overhead_s * 1e3},
          {"prefill_layer_per_sequence_ms", e.prefill_layer_per_sequence_s * 1e3},
          {"decode_layer_overhead_ms", e.decode_layer_overhead_s * 1e3},
          {"per_sequence_ms", e.per_sequence_s * 1e3},
          {"allreduce_step_ms", e.allreduce_step_s * 1e3},
          {"overhead_activity", e.overhead_activity},
          {"overhead_activity_from", r.activity_from.empty() ? r.gpu->name : r.activity_from},
          {"power",
           {{"points", r.fit.power_points},
            {"excluded", r.fit.power_excluded},
            {"average_power_mape", r.fit.power_mape}}},
          {"train",
           {{"points", r.fit.train.points},
            {"prefill_mape", r.fit.train.prefill},
            {"decode_mape", r.fit.train.decode}}},
          {"held_out",
           {{"points", r.fit.held_out.points},
            {"prefill_mape", r.fit.held_out.prefill},
            {"decode_mape", r.fit.held_out.decode}}}};
}

std::string ParameterTable(const model::ProfileFit& fit, const format::TextStyle& style) {
  format::TextTable table({{"GPU", format::TextTable::Align::kLeft},
                           {"COMPUTE EFF"},
                           {"HALF WIDTH"},
                           {"MEMORY EFF"},
                           {"PREFILL/LAYER ms"},
                           {"PREFILL/LAYER/SEQ ms"},
                           {"DECODE/LAYER ms"},
                           {"DECODE/SEQ ms"},
                           {"AR STEP us"},
                           {"TRAIN pts"},
                           {"PREFILL MAPE"},
                           {"DECODE MAPE"},
                           {"HELD-OUT pts"},
                           {"PREFILL MAPE"},
                           {"DECODE MAPE"},
                           {"ACTIVITY"},
                           {"POWER pts"},
                           {"POWER MAPE"}});
  for (const model::GpuProfileFit& r : fit.fits) {
    const model::InferenceEfficiency& e = r.fit.efficiency;
    table.AddRow({r.gpu->name, fmt::format("{:.3f}", e.compute_efficiency),
                  fmt::format("{:.0f}", e.half_efficiency_width),
                  fmt::format("{:.3f}", e.memory_efficiency),
                  fmt::format("{:.2f}", e.prefill_layer_overhead_s * 1e3),
                  fmt::format("{:.2f}", e.prefill_layer_per_sequence_s * 1e3),
                  fmt::format("{:.2f}", e.decode_layer_overhead_s * 1e3),
                  fmt::format("{:.3f}", e.per_sequence_s * 1e3),
                  fmt::format("{:.1f}", e.allreduce_step_s * 1e6),
                  std::to_string(r.fit.train.points), Percent(r.fit.train.prefill),
                  Percent(r.fit.train.decode), std::to_string(r.fit.held_out.points),
                  Percent(r.fit.held_out.prefill), Percent(r.fit.held_out.decode),
                  fmt::format("{:.3f}{}", e.overhead_activity, r.activity_from.empty() ? "" : "*"),
                  std::to_string(r.fit.power_points),
                  r.fit.power_points > 0 ? Percent(r.fit.power_mape) : "-"});
  }
  return table.Render(style);
}

}  // namespace

ordered_json ModelFitJson(const model::ProfileFit& fit, const std::string& profile,
                          const std::string& model) {
  ordered_json out;
  out["profile"] = profile;
  out["model"] = model;
  out["excluded"] = fit.excluded;
  for (const model::CappedProfileFit& c : fit.capped) {
    out["capped"].push_back({{"profile_hardware", c.profile_hardware},
                             {"gpu", c.gpu->name},
                             {"implied_power_limit_w", c.cap.limit.value()},
                             {"prefill_mape", c.cap.mape.prefill},
                             {"decode_mape", c.cap.mape.decode},
                             {"points", c.cap.mape.points}});
  }
  for (const model::GpuProfileFit& r : fit.fits) out["fits"].push_back(GpuFitJson(r));
  return out;
}

std::string ModelFitText(const model::ProfileFit& fit, const std::string& profile,
                         const std::string& model, const format::TextStyle& style) {
  std::string out = fmt::format(
      "Fit of the inference model on {} ({}), MAPE of prefill time and decode-step time:\n",
      profile, model);
  out += ParameterTable(fit, style);
  for (const model::GpuProfileFit& r : fit.fits) {
    if (!r.activity_from.empty()) {
      out += fmt::format("* {}: no power in its profile; overhead activity taken from {}.\n",
                         r.gpu->name, r.activity_from);
    }
    if (r.fit.power_excluded > 0) {
      out += fmt::format(
          "{}: {} point(s) with request-average power under 30% of TDP left out of the power "
          "fit (sensor artefacts: their prefill alone runs seconds near TDP).\n",
          r.gpu->name, r.fit.power_excluded);
    }
  }
  for (const model::CappedProfileFit& c : fit.capped) {
    out += fmt::format(
        "{}: reproduced as {} under a {:.0f} W power limit (prefill MAPE {:.1f}%, decode {:.1f}%, "
        "{} points).\n",
        c.profile_hardware, c.gpu->name, c.cap.limit.value(), c.cap.mape.prefill * 100,
        c.cap.mape.decode * 100, c.cap.mape.points);
  }
  out +=
      fmt::format("Excluded {} configuration(s) as physically impossible:\n", fit.excluded.size());
  for (const std::string& reason : fit.excluded) out += "  " + reason + "\n";
  return out;
}

std::string ModelFitPointsText(const model::ProfileFit& fit, const model::ModelSpec& spec,
                               const format::TextStyle& style) {
  std::string out;
  for (const model::GpuProfileFit& r : fit.fits) {
    const model::InferenceModel m(spec, model::GpuPowerModel(*r.gpu), r.fit.efficiency);
    format::TextTable t({{"SPLIT", format::TextTable::Align::kLeft},
                         {"TP"},
                         {"PROMPT"},
                         {"BATCH"},
                         {"OUTPUT"},
                         {"PREFILL ms"},
                         {"MODEL ms"},
                         {"ERR"},
                         {"DECODE ms"},
                         {"MODEL ms"},
                         {"ERR"}});
    const core::Megahertz f = r.gpu->sm_clock_max;
    for (const model::ProfilePoint& p : fit.kept) {
      if (p.hardware != r.profile_hardware) continue;
      const double pre = m.AtClock(m.PrefillPhase(model::PrefillShapeOf(p)), p.tp, f).time_s;
      const double dec = m.AtClock(*m.DecodePhase(model::DecodeShapeOf(p)), p.tp, f).time_s;
      t.AddRow({model::IsHeldOut(p) ? "held-out" : "train", std::to_string(p.tp),
                std::to_string(p.prompt), std::to_string(p.batch), std::to_string(p.output),
                fmt::format("{:.1f}", p.prefill_s * 1e3), fmt::format("{:.1f}", pre * 1e3),
                fmt::format("{:+.1f}%", (pre / p.prefill_s - 1) * 100),
                fmt::format("{:.2f}", p.decode_step_s * 1e3), fmt::format("{:.2f}", dec * 1e3),
                fmt::format("{:+.1f}%", (dec / p.decode_step_s - 1) * 100)});
    }
    out += r.gpu->name + " (" + r.profile_hardware + "):\n" + t.Render(style);
  }
  return out;
}

}  // namespace headroom::report
