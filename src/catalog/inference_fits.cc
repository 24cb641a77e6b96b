#include "catalog/inference_fits.h"

#include <fmt/format.h>

#include "catalog/embedded_data.h"
#include "core/yaml_reader.h"

namespace headroom::catalog {

core::Result<InferenceFits> InferenceFits::Parse(std::string_view text, const std::string& source) {
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader doc, core::YamlReader::Parse(text, source));
  HEADROOM_RETURN_IF_ERROR(
      doc.CheckKnownKeys({"profile", "fits", "overhead_activity_from", "borrowed"}));
  HEADROOM_ASSIGN_OR_RETURN(core::YamlReader fits, doc.Map("fits"));
  InferenceFits out;
  for (const std::string& gpu : fits.Keys()) {
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader f, fits.Map(gpu));
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
    out.fitted_[gpu] = e;
  }
  if (doc.Has("overhead_activity_from")) {
    // GPU types whose profile has no power borrow the activity of one that has.
    HEADROOM_ASSIGN_OR_RETURN(core::YamlReader from, doc.Map("overhead_activity_from"));
    for (const std::string& gpu : from.Keys()) {
      HEADROOM_ASSIGN_OR_RETURN(std::string source_gpu, from.String(gpu));
      if (!out.fitted_.contains(gpu) || !out.fitted_.contains(source_gpu)) {
        return core::Fail(from.ErrorAt(gpu, "both GPU types need a fit"));
      }
      out.fitted_[gpu].overhead_activity = out.fitted_[source_gpu].overhead_activity;
    }
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

core::Result<InferenceFits> InferenceFits::Embedded() {
  const auto files = EmbeddedFitFiles();
  if (files.size() != 1) {
    return core::Fail(core::Error::Internal("expected exactly one embedded fit file"));
  }
  return Parse(files[0].content, std::string(files[0].path));
}

core::Result<GpuFit> InferenceFits::For(const std::string& gpu) const {
  if (auto it = fitted_.find(gpu); it != fitted_.end()) return GpuFit{it->second, gpu};
  if (auto it = borrowed_.find(gpu); it != borrowed_.end()) {
    return GpuFit{fitted_.at(it->second), it->second};
  }
  return core::Fail(core::Error::NotFound(
      fmt::format("no inference fit for GPU type '{}' (run headroom model fit, or borrow one in "
                  "data/fits/inference-efficiency.yaml)",
                  gpu)));
}

}  // namespace headroom::catalog
