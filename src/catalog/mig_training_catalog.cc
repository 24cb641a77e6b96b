#include "catalog/mig_training_catalog.h"

#include <fmt/format.h>

#include "catalog/embedded_data.h"
#include "core/parse.h"
#include "core/yaml_reader.h"

namespace headroom::catalog {
namespace {

using core::Fail;
using core::Result;
using core::YamlReader;

Result<mig::MeasuredWorkload> ParseWorkload(const YamlReader& w, const std::string& name) {
  HEADROOM_RETURN_IF_ERROR(w.CheckKnownKeys(
      {"model", "kind", "mode", "sequence_tokens", "parameters", "trained_parameters", "optimizer",
       "flops_per_sample", "samples_per_epoch", "default_batch", "measured"}));
  mig::MeasuredWorkload out;
  out.name = name;
  HEADROOM_ASSIGN_OR_RETURN(out.model, w.String("model"));
  HEADROOM_ASSIGN_OR_RETURN(out.kind, w.String("kind"));
  if (out.kind != "image" && out.kind != "llm") {
    return Fail(w.ErrorAt("kind", fmt::format("'{}' is not image or llm", out.kind)));
  }
  HEADROOM_ASSIGN_OR_RETURN(out.mode, w.String("mode"));
  if (out.mode != "pretrain" && out.mode != "finetune") {
    return Fail(w.ErrorAt("mode", fmt::format("'{}' is not pretrain or finetune", out.mode)));
  }
  if (w.Has("sequence_tokens")) {
    HEADROOM_RETURN_IF_ERROR(w.IntegerIn("sequence_tokens", 1, 1 << 20));
  }
  HEADROOM_ASSIGN_OR_RETURN(out.parameters, w.NumberIn("parameters", 1, 1e13));
  HEADROOM_ASSIGN_OR_RETURN(std::string trained, w.String("trained_parameters"));
  if (trained != "all" && trained != "head only") {
    return Fail(w.ErrorAt("trained_parameters", "expected 'all' or 'head only'"));
  }
  out.head_only = trained == "head only";
  HEADROOM_ASSIGN_OR_RETURN(std::string optimizer, w.String("optimizer"));
  if (optimizer == "adamw") {
    out.optimizer = mig::Optimizer::kAdamW;
  } else if (optimizer == "sgd-momentum") {
    out.optimizer = mig::Optimizer::kSgdMomentum;
  } else {
    return Fail(
        w.ErrorAt("optimizer", fmt::format("'{}' is not adamw or sgd-momentum", optimizer)));
  }
  HEADROOM_ASSIGN_OR_RETURN(out.flops_per_sample, w.NumberIn("flops_per_sample", 1, 1e18));
  HEADROOM_ASSIGN_OR_RETURN(out.samples_per_epoch, w.NumberIn("samples_per_epoch", 1, 1e12));
  HEADROOM_ASSIGN_OR_RETURN(out.default_batch, w.IntegerIn("default_batch", 1, 1 << 20));
  HEADROOM_ASSIGN_OR_RETURN(std::vector<YamlReader> points, w.MapList("measured"));
  if (points.size() < 2) return Fail(w.ErrorAt("measured", "needs two or more batch sizes"));
  for (const YamlReader& p : points) {
    HEADROOM_RETURN_IF_ERROR(p.CheckKnownKeys({"batch", "samples_per_s", "power_w", "memory_gib"}));
    mig::MeasuredPoint point;
    HEADROOM_ASSIGN_OR_RETURN(point.batch, p.IntegerIn("batch", 1, 1 << 20));
    HEADROOM_ASSIGN_OR_RETURN(point.samples_per_s, p.NumberIn("samples_per_s", 1e-6, 1e9));
    HEADROOM_ASSIGN_OR_RETURN(point.power_w, p.NumberIn("power_w", 1, 1e5));
    HEADROOM_ASSIGN_OR_RETURN(point.memory_gib, p.NumberIn("memory_gib", 0, 1e6));
    if (!out.measured.empty() && point.batch <= out.measured.back().batch) {
      return Fail(p.ErrorAt("batch", "batch sizes must ascend"));
    }
    out.measured.push_back(point);
  }
  return out;
}

}  // namespace

Result<MigTrainingCatalog> MigTrainingCatalog::Parse(std::string_view text,
                                                     const std::string& source) {
  HEADROOM_ASSIGN_OR_RETURN(YamlReader doc, YamlReader::Parse(text, source));
  HEADROOM_RETURN_IF_ERROR(
      doc.CheckKnownKeys({"kind", "reference_gpu", "reference_idle_w", "workloads"}));
  HEADROOM_ASSIGN_OR_RETURN(std::string kind, doc.String("kind"));
  if (kind != "mig-training") {
    return Fail(doc.ErrorAt("kind", fmt::format("'{}' is not mig-training", kind)));
  }
  MigTrainingCatalog out;
  HEADROOM_ASSIGN_OR_RETURN(out.reference_gpu_, doc.String("reference_gpu"));
  HEADROOM_ASSIGN_OR_RETURN(out.reference_idle_w_, doc.NumberIn("reference_idle_w", 0, 1e4));
  HEADROOM_ASSIGN_OR_RETURN(YamlReader list, doc.Map("workloads"));
  for (const std::string& name : list.Keys()) {
    HEADROOM_ASSIGN_OR_RETURN(YamlReader w, list.Map(name));
    HEADROOM_ASSIGN_OR_RETURN(mig::MeasuredWorkload workload, ParseWorkload(w, name));
    out.workloads_.push_back(std::move(workload));
  }
  if (out.workloads_.empty()) return Fail(doc.ErrorAt("workloads", "no workloads"));
  return out;
}

Result<MigTrainingCatalog> MigTrainingCatalog::Embedded() {
  for (const core::EmbeddedFile& file : EmbeddedWorkloadFiles()) {
    if (std::string_view(file.path).ends_with("mig-training.yaml")) {
      return Parse(file.parse_text(), std::string(file.path));
    }
  }
  return Fail(core::Error::Internal("data/workloads/mig-training.yaml is not embedded"));
}

Result<mig::MeasuredWorkload> MigTrainingCatalog::Workload(std::string_view name) const {
  std::string known;
  for (const auto& w : workloads_) {
    if (w.name == name) return w;
    known += (known.empty() ? "" : ", ") + w.name;
  }
  return Fail(core::Error::NotFound(
      fmt::format("unknown training workload '{}' (known: {})", name, known)));
}

Result<std::vector<mig::MeasuredWorkload>> MigTrainingCatalog::Select(
    std::string_view names) const {
  if (names == "all") return workloads_;
  std::vector<mig::MeasuredWorkload> out;
  for (std::string_view name : core::Split(names, ',')) {
    HEADROOM_ASSIGN_OR_RETURN(mig::MeasuredWorkload w, Workload(core::Trim(name)));
    out.push_back(std::move(w));
  }
  return out;
}

}  // namespace headroom::catalog
