#include "catalog/inference_fits.h"

#include <algorithm>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "catalog/embedded_data.h"
#include "core/files.h"
#include "core/parse.h"
#include "core/yaml_reader.h"

namespace headroom::catalog {
namespace {

// A GPU type an engine was not measured on borrows the parameters of its closest measured
// sibling, in this order of preference (same SMs and software stack; only memory or board power
// differ, which the roofline and the power model already account for).
const std::vector<std::pair<std::string, std::vector<std::string>>> kSiblings = {
    {"a100-40gb-sxm", {"a100-80gb-sxm"}},
    {"a100-80gb-sxm", {"a100-40gb-sxm"}},
    {"h100-80gb-pcie", {"h100-80gb-sxm", "h200-141gb-sxm"}},
    {"h100-80gb-sxm", {"h200-141gb-sxm"}},
    {"h200-141gb-sxm", {"h100-80gb-sxm"}},
};

using E = model::InferenceEfficiency;
constexpr std::tuple<const char*, double E::*, double> kOptionalTimes[] = {
    {"host_step_ms", &E::host_step_s, 10000.0},
    {"host_per_sequence_ms", &E::host_per_sequence_s, 1000.0},
    {"allreduce_latency_ms", &E::allreduce_latency_s, 1000.0},
    {"server_request_ms", &E::server_request_s, 10000.0},
};

core::Result<model::InferenceEfficiency> ParseEfficiency(const core::YamlReader& f) {
  HEADROOM_RETURN_IF_ERROR(f.CheckKnownKeys(
      {"compute_efficiency", "half_efficiency_width", "memory_efficiency",
       "prefill_layer_overhead_ms", "prefill_layer_per_sequence_ms", "decode_layer_overhead_ms",
       "per_sequence_ms", "allreduce_step_ms", "overhead_activity", "host_step_ms",
       "host_per_sequence_ms", "allreduce_latency_ms", "server_request_ms"}));
  model::InferenceEfficiency e;
  HEADROOM_ASSIGN_OR_RETURN(e.compute_efficiency, f.NumberIn("compute_efficiency", 0.01, 1));
  HEADROOM_ASSIGN_OR_RETURN(e.half_efficiency_width, f.NumberIn("half_efficiency_width", 0, 1e6));
  HEADROOM_ASSIGN_OR_RETURN(e.memory_efficiency, f.NumberIn("memory_efficiency", 0.01, 1));
  HEADROOM_ASSIGN_OR_RETURN(double prefill_ms, f.NumberIn("prefill_layer_overhead_ms", 0, 10000));
  HEADROOM_ASSIGN_OR_RETURN(double prefill_seq_ms,
                            f.NumberIn("prefill_layer_per_sequence_ms", 0, 10000));
  HEADROOM_ASSIGN_OR_RETURN(double decode_ms, f.NumberIn("decode_layer_overhead_ms", 0, 10000));
  HEADROOM_ASSIGN_OR_RETURN(double sequence_ms, f.NumberIn("per_sequence_ms", 0, 1000));
  HEADROOM_ASSIGN_OR_RETURN(double step_ms, f.NumberIn("allreduce_step_ms", 0, 1000));
  e.prefill_layer_overhead_s = prefill_ms / 1e3;
  e.prefill_layer_per_sequence_s = prefill_seq_ms / 1e3;
  e.decode_layer_overhead_s = decode_ms / 1e3;
  e.per_sequence_s = sequence_ms / 1e3;
  e.allreduce_step_s = step_ms / 1e3;
  HEADROOM_ASSIGN_OR_RETURN(e.overhead_activity, f.NumberIn("overhead_activity", 0, 1));
  // A serving process's host and request time and a one-pass all-reduce: optional, 0 (none)
  // for engines measured offline or on older kernels.
  for (const auto& [key, field, max_ms] : kOptionalTimes) {
    if (!f.Has(key)) continue;
    HEADROOM_ASSIGN_OR_RETURN(const double ms, f.NumberIn(key, 0, max_ms));
    e.*field = ms / 1e3;
  }
  return e;
}

core::Result<EngineCalibration> ParseCalibration(const core::YamlReader& calibration) {
  HEADROOM_RETURN_IF_ERROR(calibration.CheckKnownKeys({"datasets", "models", "tp", "base"}));
  EngineCalibration c;
  HEADROOM_ASSIGN_OR_RETURN(c.datasets, calibration.StringList("datasets"));
  HEADROOM_ASSIGN_OR_RETURN(c.models, calibration.StringList("models"));
  if (calibration.Has("tp")) {
    HEADROOM_ASSIGN_OR_RETURN(std::vector<std::string> tps, calibration.StringList("tp"));
    for (const std::string& tp : tps) {
      const auto n = core::ParseInteger(tp);
      if (!n || *n < 1 || *n > 64) {
        return core::Fail(calibration.ErrorAt("tp", fmt::format("'{}' is not a GPU count", tp)));
      }
      c.tp.push_back(static_cast<int>(*n));
    }
  }
  HEADROOM_ASSIGN_OR_RETURN(auto base, calibration.OptionalString("base"));
  c.base = base.value_or("");
  return c;
}

core::Result<std::map<std::string, SchedulerDefaults>> ParseScheduler(
    const core::YamlReader& scheduler) {
  std::map<std::string, SchedulerDefaults> out;
  for (const std::string& gpu : scheduler.Keys()) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader s, scheduler.Map(gpu));
    HEADROOM_RETURN_IF_ERROR(s.CheckKnownKeys({"max_num_batched_tokens", "max_num_seqs"}));
    HEADROOM_ASSIGN_OR_RETURN(const double tokens,
                              s.NumberIn("max_num_batched_tokens", 0, 1 << 24));
    HEADROOM_ASSIGN_OR_RETURN(const double seqs, s.NumberIn("max_num_seqs", 1, 65536));
    if (tokens > 0 && tokens < seqs) {
      return core::Fail(s.ErrorAt("max_num_batched_tokens",
                                  "smaller than max_num_seqs: a full batch's decode tokens would "
                                  "not fit one iteration"));
    }
    out[gpu] = {.max_num_batched_tokens = static_cast<int>(tokens),
                .max_num_seqs = static_cast<int>(seqs)};
  }
  return out;
}

// A string as a YAML double-quoted scalar (a JSON string literal is one): names and
// descriptions come from users' files and flags, and may hold ':', '#' or quotes.
std::string Quoted(const std::string& text) {
  return nlohmann::json(text).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string QuotedList(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + Quoted(item);
  return out;
}

bool Contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

}  // namespace

InferenceFits::InferenceFits(std::string engine, std::string description)
    : engine_(std::move(engine)), description_(std::move(description)) {}

core::Result<InferenceFits> InferenceFits::Parse(std::string_view text, const std::string& source) {
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader doc, core::YamlReader::Parse(text, source));
  HEADROOM_RETURN_IF_ERROR(
      doc.CheckKnownKeys({"engine", "version", "description", "profile", "calibration", "fits",
                          "overhead_activity_from", "borrowed", "scheduler"}));
  HEADROOM_ASSIGN_OR_RETURN(std::string engine, doc.String("engine"));
  HEADROOM_ASSIGN_OR_RETURN(auto description, doc.OptionalString("description"));
  InferenceFits out(std::move(engine), description.value_or(""));
  HEADROOM_ASSIGN_OR_RETURN(auto version, doc.OptionalString("version"));
  out.version_ = version.value_or("");
  HEADROOM_ASSIGN_OR_RETURN(auto profile, doc.OptionalString("profile"));
  out.profile_ = profile.value_or("");
  if (doc.Has("calibration")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader calibration, doc.Map("calibration"));
    HEADROOM_ASSIGN_OR_RETURN(out.calibration_, ParseCalibration(calibration));
  }
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader fits, doc.Map("fits"));
  for (const std::string& gpu : fits.Keys()) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader f, fits.Map(gpu));
    HEADROOM_ASSIGN_OR_RETURN(out.fitted_[gpu], ParseEfficiency(f));
  }
  if (out.fitted_.empty()) return core::Fail(doc.ErrorAt("fits", "no GPU type is fitted"));
  if (doc.Has("overhead_activity_from")) {
    // GPU types whose measurements have no power borrow the activity of one that has.
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader from, doc.Map("overhead_activity_from"));
    for (const std::string& gpu : from.Keys()) {
      HEADROOM_ASSIGN_OR_RETURN(std::string source_gpu, from.String(gpu));
      if (!out.fitted_.contains(gpu) || !out.fitted_.contains(source_gpu)) {
        return core::Fail(from.ErrorAt(gpu, "both GPU types need a fit"));
      }
      out.fitted_[gpu].overhead_activity = out.fitted_[source_gpu].overhead_activity;
      out.activity_from_[gpu] = source_gpu;
    }
  }
  if (doc.Has("scheduler")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader scheduler, doc.Map("scheduler"));
    HEADROOM_ASSIGN_OR_RETURN(out.scheduler_, ParseScheduler(scheduler));
  }
  if (doc.Has("borrowed")) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader borrowed, doc.Map("borrowed"));
    for (const std::string& gpu : borrowed.Keys()) {
      HEADROOM_ASSIGN_OR_RETURN(std::string from, borrowed.String(gpu));
      if (!out.fitted_.contains(from)) {
        return core::Fail(borrowed.ErrorAt(gpu, fmt::format("'{}' has no fit to borrow", from)));
      }
      out.borrowed_[gpu] = from;
    }
  }
  return out;
}

core::Result<InferenceFits> InferenceFits::Load(const std::string& path) {
  HEADROOM_ASSIGN_OR_RETURN(std::string text, core::ReadFile(path));
  return Parse(text, path);
}

core::Result<InferenceFits> InferenceFits::Embedded() {
  HEADROOM_ASSIGN_OR_RETURN(EngineCatalog engines, EngineCatalog::Embedded());
  HEADROOM_ASSIGN_OR_RETURN(const InferenceFits* fits, engines.Engine(kProfileEngine));
  return *fits;
}

bool InferenceFits::IsCalibrationRow(const model::Measurement& m) const {
  return calibration_ && m.engine == engine_ && Contains(calibration_->datasets, m.dataset) &&
         Contains(calibration_->models, m.model) &&
         (calibration_->tp.empty() || std::find(calibration_->tp.begin(), calibration_->tp.end(),
                                                m.tp) != calibration_->tp.end());
}

std::optional<SchedulerDefaults> InferenceFits::SchedulerFor(const std::string& gpu) const {
  for (const std::string& key : {gpu, std::string("default")}) {
    if (auto it = scheduler_.find(key); it != scheduler_.end()) return it->second;
  }
  return std::nullopt;
}

std::vector<std::string> InferenceFits::FittedGpus() const {
  std::vector<std::string> out;
  for (const auto& [gpu, e] : fitted_) out.push_back(gpu);
  return out;
}

core::Result<GpuFit> InferenceFits::For(const std::string& gpu) const {
  if (auto it = fitted_.find(gpu); it != fitted_.end()) return GpuFit{it->second, gpu};
  if (auto it = borrowed_.find(gpu); it != borrowed_.end()) {
    return GpuFit{fitted_.at(it->second), it->second};
  }
  return core::Fail(core::Error::NotFound(fmt::format(
      "engine '{}' has no calibration for GPU type '{}' (it was fitted on {}): fit one with "
      "headroom model fit --profile, or choose another --engine",
      engine_, gpu, fmt::join(FittedGpus(), ", "))));
}

void InferenceFits::SetFit(const std::string& gpu, const model::InferenceEfficiency& efficiency,
                           const std::string& activity_from) {
  fitted_[gpu] = efficiency;
  if (!activity_from.empty()) activity_from_[gpu] = activity_from;
  borrowed_.clear();
  for (const auto& [name, siblings] : kSiblings) {
    if (fitted_.contains(name)) continue;
    for (const std::string& sibling : siblings) {
      if (fitted_.contains(sibling)) {
        borrowed_[name] = sibling;
        break;
      }
    }
  }
}

std::string InferenceFits::ToYaml(std::string_view comment) const {
  std::string out = fmt::format("{}engine: {}\n", comment, Quoted(engine_));
  if (!version_.empty()) out += fmt::format("version: {}\n", Quoted(version_));
  out += fmt::format("description: {}\n", Quoted(description_));
  if (!profile_.empty()) out += fmt::format("profile: {}\n", Quoted(profile_));
  if (calibration_) {
    out += fmt::format(
        "calibration:  # the validation suite's rows it was fitted on\n"
        "  datasets: [{}]\n  models: [{}]\n",
        QuotedList(calibration_->datasets), QuotedList(calibration_->models));
    if (!calibration_->tp.empty())
      out += fmt::format("  tp: [{}]\n", fmt::join(calibration_->tp, ", "));
    if (!calibration_->base.empty()) out += fmt::format("  base: {}\n", Quoted(calibration_->base));
  }
  out += "fits:\n";
  std::string activity_from;
  for (const auto& [gpu, e] : fitted_) {
    std::string activity_note;
    if (auto it = activity_from_.find(gpu); it != activity_from_.end()) {
      if (fitted_.contains(it->second)) {
        activity_from += fmt::format("  {}: {}\n", Quoted(gpu), Quoted(it->second));
      } else {
        // A comment ends at the line: keep the note on it.
        std::string note = it->second;
        std::replace_if(
            note.begin(), note.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
        activity_note = "  # " + note;
      }
    }
    out += fmt::format(
        "  {}:\n    compute_efficiency: {:.6f}\n    half_efficiency_width: {:.3f}\n"
        "    memory_efficiency: {:.6f}\n    prefill_layer_overhead_ms: {:.6f}\n"
        "    prefill_layer_per_sequence_ms: {:.6f}\n    decode_layer_overhead_ms: {:.6f}\n"
        "    per_sequence_ms: {:.6f}\n    allreduce_step_ms: {:.6f}\n"
        "    overhead_activity: {:.3f}{}\n",
        Quoted(gpu), e.compute_efficiency, e.half_efficiency_width, e.memory_efficiency,
        e.prefill_layer_overhead_s * 1e3, e.prefill_layer_per_sequence_s * 1e3,
        e.decode_layer_overhead_s * 1e3, e.per_sequence_s * 1e3, e.allreduce_step_s * 1e3,
        e.overhead_activity, activity_note);
    if (e.host_step_s > 0 || e.host_per_sequence_s > 0) {
      out += fmt::format("    host_step_ms: {:.6f}\n    host_per_sequence_ms: {:.6f}\n",
                         e.host_step_s * 1e3, e.host_per_sequence_s * 1e3);
    }
    for (const auto& [key, field, max_ms] : {kOptionalTimes[2], kOptionalTimes[3]}) {
      if (e.*field > 0) out += fmt::format("    {}: {:.6f}\n", key, e.*field * 1e3);
    }
  }
  if (!activity_from.empty()) {
    out += "overhead_activity_from:  # measurements without power\n" + activity_from;
  }
  if (!scheduler_.empty()) {
    out += "scheduler:  # the server's own defaults, where a scenario sets none\n";
    for (const auto& [gpu, s] : scheduler_) {
      out += fmt::format("  {}: {{max_num_batched_tokens: {}, max_num_seqs: {}}}\n", Quoted(gpu),
                         s.max_num_batched_tokens, s.max_num_seqs);
    }
  }
  if (!borrowed_.empty()) {
    out += "borrowed:  # GPU types this engine was not measured on\n";
    for (const auto& [gpu, from] : borrowed_) {
      out += fmt::format("  {}: {}\n", Quoted(gpu), Quoted(from));
    }
  }
  return out;
}

core::Result<EngineCatalog> EngineCatalog::Embedded() {
  EngineCatalog out;
  for (const core::EmbeddedFile& f : EmbeddedFitFiles()) {
    HEADROOM_ASSIGN_OR_RETURN(InferenceFits fits,
                              InferenceFits::Parse(f.parse_text(), std::string(f.path)));
    out.engines_.push_back(std::move(fits));
  }
  return out;
}

core::Result<const InferenceFits*> EngineCatalog::Engine(std::string_view name) const {
  for (const InferenceFits& e : engines_) {
    if (e.engine() == name) return &e;
  }
  return core::Fail(core::Error::NotFound(
      fmt::format("no serving engine '{}' (calibrated: {}; or give --engine-file)", name,
                  fmt::join(Names(), ", "))));
}

std::vector<std::string> EngineCatalog::Names() const {
  std::vector<std::string> out;
  for (const InferenceFits& e : engines_) out.push_back(e.engine());
  return out;
}

core::Result<std::string> EngineCatalog::AddFile(const std::string& path) {
  HEADROOM_ASSIGN_OR_RETURN(InferenceFits fits, InferenceFits::Load(path));
  std::string name = fits.engine();
  Add(std::move(fits));
  return name;
}

void EngineCatalog::Add(InferenceFits fits) {
  std::erase_if(engines_, [&fits](const InferenceFits& e) { return e.engine() == fits.engine(); });
  engines_.push_back(std::move(fits));
}

InferenceFits ProfileCalibration(const model::ProfileFit& fit, const std::string& profile,
                                 const std::string& engine, const std::string& description) {
  InferenceFits out(engine, description);
  out.SetProfile(profile);
  for (const model::GpuProfileFit& r : fit.fits) {
    out.SetFit(r.gpu->name, r.fit.efficiency, r.activity_from);
  }
  return out;
}

std::string InferenceFitsYaml(const model::ProfileFit& fit, const std::string& profile,
                              const std::string& model, const std::string& engine,
                              const std::string& description) {
  return ProfileCalibration(fit, profile, engine, description)
      .ToYaml(fmt::format(
          "# Serving-engine calibration: the inference model's efficiency per GPU type. "
          "Generated by\n# `headroom model fit --write`; refit rather than edit. Fitted on {} "
          "({} rows); 1 in 5 configurations held out.\n",
          profile, model));
}

}  // namespace headroom::catalog
