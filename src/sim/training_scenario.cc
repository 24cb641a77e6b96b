#include "sim/training_scenario.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/parse.h"
#include "core/yaml_reader.h"

namespace headroom::sim {
namespace {

// A duration key; absent keeps `out`. Zero is refused where `positive`.
core::Status TrainingDuration(const core::YamlReader& doc, std::string_view key, bool positive,
                              core::Duration* out) {
  HEADROOM_ASSIGN_OR_RETURN(auto text, doc.OptionalString(key));
  if (!text) return core::Ok();
  auto d = core::ParseDuration(*text);
  if (!d) return core::Fail(doc.ErrorAt(key, d.error().message()));
  if (d->count() < 0 || (positive && d->count() == 0)) {
    return core::Fail(doc.ErrorAt(key, positive ? "must be positive" : "must not be negative"));
  }
  *out = *d;
  return core::Ok();
}

core::Status OptionalLimit(const core::YamlReader& doc, std::string_view key, double max,
                           std::optional<double>* out) {
  if (!doc.Has(key)) return core::Ok();
  HEADROOM_ASSIGN_OR_RETURN(double v, doc.NumberIn(key, 0, max));
  if (v <= 0) return core::Fail(doc.ErrorAt(key, "a limit of 0 admits no row: leave it out"));
  *out = v;
  return core::Ok();
}

core::Status ParseTrainingWorkload(const core::YamlReader& w,
                                   const catalog::TrainingCatalog& workloads, TrainingScenario& s) {
  HEADROOM_RETURN_IF_ERROR(
      w.CheckKnownKeys({"training", "checkpoint_every", "checkpoint_for", "skew"}));
  HEADROOM_ASSIGN_OR_RETURN(s.workload, w.String("training"));
  if (auto known = workloads.Workload(s.workload); !known) {
    return core::Fail(w.ErrorAt("training", known.error().message()));
  }
  HEADROOM_RETURN_IF_ERROR(TrainingDuration(w, "checkpoint_every", true, &s.checkpoint_every));
  HEADROOM_RETURN_IF_ERROR(TrainingDuration(w, "checkpoint_for", false, &s.checkpoint_for));
  HEADROOM_RETURN_IF_ERROR(TrainingDuration(w, "skew", false, &s.skew));
  if (w.Has("checkpoint_every") != w.Has("checkpoint_for")) {
    return core::Fail(w.ErrorAt(w.Has("checkpoint_every") ? "checkpoint_every" : "checkpoint_for",
                                "checkpoint_every and checkpoint_for go together"));
  }
  return core::Ok();
}

core::Status ParseSimulation(const core::YamlReader& sim, TrainingScenario& s) {
  HEADROOM_RETURN_IF_ERROR(sim.CheckKnownKeys({"step", "duration", "ramp_window"}));
  HEADROOM_RETURN_IF_ERROR(TrainingDuration(sim, "step", true, &s.step));
  if (s.step > kMaxTrainingStep) {
    return core::Fail(
        sim.ErrorAt("step", fmt::format("must be at most {} to resolve the 3-30 Hz band",
                                        core::FormatDuration(kMaxTrainingStep))));
  }
  HEADROOM_RETURN_IF_ERROR(TrainingDuration(sim, "duration", true, &s.duration));
  HEADROOM_RETURN_IF_ERROR(TrainingDuration(sim, "ramp_window", true, &s.ramp_window));
  if (s.duration < 2 * s.ramp_window || s.ramp_window < s.step) {
    return core::Fail(
        sim.ErrorAt("ramp_window", "must be at least the step and at most half the duration"));
  }
  return core::Ok();
}

core::Status ParseLimits(const core::YamlReader& g, TrainingLimits& l) {
  HEADROOM_RETURN_IF_ERROR(
      g.CheckKnownKeys({"max_ramp_w_per_s", "max_low_band_share", "max_high_band_share",
                        "max_low_band_amplitude_w", "max_high_band_amplitude_w"}));
  HEADROOM_RETURN_IF_ERROR(OptionalLimit(g, "max_ramp_w_per_s", 1e12, &l.max_ramp_w_per_s));
  HEADROOM_RETURN_IF_ERROR(OptionalLimit(g, "max_low_band_share", 1, &l.max_low_band_share));
  HEADROOM_RETURN_IF_ERROR(OptionalLimit(g, "max_high_band_share", 1, &l.max_high_band_share));
  HEADROOM_RETURN_IF_ERROR(
      OptionalLimit(g, "max_low_band_amplitude_w", 1e12, &l.max_low_band_amplitude_w));
  return OptionalLimit(g, "max_high_band_amplitude_w", 1e12, &l.max_high_band_amplitude_w);
}

core::Status ParseSmoothing(const core::YamlReader& m, Mitigation& x) {
  HEADROOM_RETURN_IF_ERROR(m.CheckKnownKeys({"kind", "name", "floor_pct", "ramp_up_w_per_s",
                                             "ramp_down_w_per_s", "ramp_down_hysteresis"}));
  x.kind = MitigationKind::kPowerSmoothing;
  HEADROOM_ASSIGN_OR_RETURN(x.floor_pct, m.NumberIn("floor_pct", 0, 100));
  for (auto [key, out] : {std::pair{"ramp_up_w_per_s", &x.ramp_up_w_per_s},
                          std::pair{"ramp_down_w_per_s", &x.ramp_down_w_per_s}}) {
    HEADROOM_ASSIGN_OR_RETURN(*out, m.NumberIn(key, 0, 1e9));
    if (*out <= 0) {
      return core::Fail(m.ErrorAt(key, "a ramp limit of 0 W/s would hold the GPU's power still"));
    }
  }
  HEADROOM_RETURN_IF_ERROR(
      TrainingDuration(m, "ramp_down_hysteresis", false, &x.ramp_down_hysteresis));
  if (x.name.empty()) {
    x.name = fmt::format("smoothing {:g}% {:g}/{:g} W/s {}", x.floor_pct, x.ramp_up_w_per_s,
                         x.ramp_down_w_per_s, core::FormatDuration(x.ramp_down_hysteresis));
  }
  return core::Ok();
}

core::Result<Mitigation> ParseMitigation(const core::YamlReader& m, const model::GpuSpec& gpu) {
  Mitigation x;
  HEADROOM_ASSIGN_OR_RETURN(const std::string kind, m.String("kind"));
  HEADROOM_ASSIGN_OR_RETURN(auto name, m.OptionalString("name"));
  x.name = name.value_or("");
  if (kind == "none") {
    HEADROOM_RETURN_IF_ERROR(m.CheckKnownKeys({"kind", "name"}));
    if (x.name.empty()) x.name = "none";
    return x;
  }
  if (kind == "clock-lock") {
    HEADROOM_RETURN_IF_ERROR(m.CheckKnownKeys({"kind", "name", "clock_mhz"}));
    x.kind = MitigationKind::kClockLock;
    HEADROOM_ASSIGN_OR_RETURN(
        x.clock_mhz, m.NumberIn("clock_mhz", gpu.sm_clock_min.value(), gpu.sm_clock_max.value()));
    if (x.name.empty()) x.name = fmt::format("clock-lock {:g} MHz", x.clock_mhz);
    return x;
  }
  if (kind == "power-smoothing") {
    HEADROOM_RETURN_IF_ERROR(ParseSmoothing(m, x));
    return x;
  }
  return core::Fail(
      m.ErrorAt("kind", fmt::format("unknown mitigation '{}' (known: none, clock-lock, "
                                    "power-smoothing)",
                                    kind)));
}

core::Status ParseMitigations(const core::YamlReader& doc, const model::GpuSpec& gpu,
                              TrainingScenario& s) {
  HEADROOM_ASSIGN_OR_RETURN(std::vector<core::YamlReader> items, doc.MapList("mitigations"));
  for (const core::YamlReader& item : items) {
    HEADROOM_ASSIGN_OR_RETURN(Mitigation m, ParseMitigation(item, gpu));
    for (const Mitigation& before : s.mitigations) {
      if (before.name == m.name) {
        return core::Fail(item.ErrorAt("", fmt::format("a second mitigation named '{}'", m.name)));
      }
    }
    s.mitigations.push_back(std::move(m));
  }
  if (s.mitigations.empty() || s.mitigations.front().kind != MitigationKind::kNone) {
    return core::Fail(
        doc.ErrorAt("mitigations", "must list `{kind: none}` first: every cost is relative to it"));
  }
  return core::Ok();
}

core::Result<const model::GpuSpec*> ParseTrainingRow(const core::YamlReader& row,
                                                     const catalog::HardwareCatalog& hardware,
                                                     TrainingScenario& s) {
  HEADROOM_RETURN_IF_ERROR(row.CheckKnownKeys({"server", "servers"}));
  HEADROOM_ASSIGN_OR_RETURN(s.server, row.String("server"));
  auto server = hardware.Server(s.server);
  if (!server) return core::Fail(row.ErrorAt("server", server.error().message()));
  HEADROOM_ASSIGN_OR_RETURN(s.servers, row.IntegerIn("servers", 1, kMaxTrainingServers));
  auto gpu = hardware.Gpu((*server)->gpu);
  if (!gpu) return core::Fail(row.ErrorAt("server", gpu.error().message()));
  return *gpu;
}

}  // namespace

core::Result<std::string> ScenarioKindOf(std::string_view text, std::string source) {
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader doc, core::YamlReader::Parse(text, std::move(source)));
  HEADROOM_ASSIGN_OR_RETURN(auto kind, doc.OptionalString("kind"));
  return kind.value_or("");
}

core::Result<TrainingScenario> ParseTrainingScenario(std::string_view text, std::string source,
                                                     const catalog::HardwareCatalog& hardware,
                                                     const catalog::TrainingCatalog& workloads) {
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader doc, core::YamlReader::Parse(text, source));
  HEADROOM_RETURN_IF_ERROR(doc.CheckKnownKeys({"kind", "name", "description", "row", "workload",
                                               "simulation", "grid", "mitigations", "seed"}));
  HEADROOM_ASSIGN_OR_RETURN(const std::string kind, doc.String("kind"));
  if (kind != kTrainingRowKind) {
    return core::Fail(doc.ErrorAt("kind", fmt::format("expected {}", kTrainingRowKind)));
  }
  TrainingScenario s;
  s.source = std::move(source);
  HEADROOM_ASSIGN_OR_RETURN(s.name, doc.String("name"));
  HEADROOM_ASSIGN_OR_RETURN(auto description, doc.OptionalString("description"));
  s.description = description.value_or("");
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader row, doc.Map("row"));
  HEADROOM_ASSIGN_OR_RETURN(const model::GpuSpec* gpu, ParseTrainingRow(row, hardware, s));
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader workload, doc.Map("workload"));
  HEADROOM_RETURN_IF_ERROR(ParseTrainingWorkload(workload, workloads, s));
  if (doc.Has("simulation")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader sim, doc.Map("simulation"));
    HEADROOM_RETURN_IF_ERROR(ParseSimulation(sim, s));
    if (s.servers * static_cast<double>(s.duration / s.step) > kMaxTrainingServerSteps) {
      return core::Fail(sim.ErrorAt(
          "duration", fmt::format("{} servers for this long at this step exceed {:g} server-steps",
                                  s.servers, kMaxTrainingServerSteps)));
    }
  }
  if (doc.Has("grid")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader grid, doc.Map("grid"));
    HEADROOM_RETURN_IF_ERROR(ParseLimits(grid, s.limits));
  }
  HEADROOM_RETURN_IF_ERROR(ParseMitigations(doc, *gpu, s));
  if (doc.Has("seed")) {
    HEADROOM_ASSIGN_OR_RETURN(double seed, doc.NumberIn("seed", 0, 9e15));
    s.seed = static_cast<std::uint64_t>(seed);
  }
  return s;
}

}  // namespace headroom::sim
