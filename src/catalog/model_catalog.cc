#include "catalog/model_catalog.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "catalog/embedded_data.h"

namespace headroom::catalog {
namespace {

using core::Fail;
using core::Result;
using core::YamlReader;

// A derived parameter count further than this from the published one means a wrong field.
constexpr double kParameterTolerance = 0.06;

Result<int> PositiveInt(const YamlReader& doc, std::string_view key, double max) {
  HEADROOM_ASSIGN_OR_RETURN(double v, doc.NumberIn(key, 1, max));
  if (v != std::floor(v)) return Fail(doc.ErrorAt(key, "expected a whole number"));
  return static_cast<int>(v);
}

}  // namespace

Result<model::ModelSpec> ParseModelSpec(const YamlReader& doc) {
  HEADROOM_RETURN_IF_ERROR(
      doc.CheckKnownKeys({"name", "aliases", "architecture", "parameters_b", "layers",
                          "encoder_layers", "hidden", "heads", "kv_heads", "head_dim", "ffn",
                          "ffn_gated", "vocab", "tied_embeddings", "dtype", "max_context"}));
  model::ModelSpec m;
  HEADROOM_ASSIGN_OR_RETURN(m.name, doc.String("name"));
  HEADROOM_ASSIGN_OR_RETURN(m.aliases, doc.StringList("aliases"));
  HEADROOM_ASSIGN_OR_RETURN(std::string arch, doc.String("architecture"));
  if (arch == "decoder") {
    m.architecture = model::ModelArchitecture::kDecoder;
  } else if (arch == "encoder-decoder") {
    m.architecture = model::ModelArchitecture::kEncoderDecoder;
  } else if (arch == "encoder") {
    m.architecture = model::ModelArchitecture::kEncoder;
  } else {
    return Fail(doc.ErrorAt("architecture", fmt::format("'{}' is not decoder, encoder-decoder or "
                                                        "encoder",
                                                        arch)));
  }
  HEADROOM_ASSIGN_OR_RETURN(m.parameters_b, doc.NumberIn("parameters_b", 0.001, 10000));
  HEADROOM_ASSIGN_OR_RETURN(m.layers, PositiveInt(doc, "layers", 1000));
  if (m.architecture == model::ModelArchitecture::kEncoderDecoder) {
    HEADROOM_ASSIGN_OR_RETURN(m.encoder_layers, PositiveInt(doc, "encoder_layers", 1000));
  } else if (doc.Has("encoder_layers")) {
    return Fail(doc.ErrorAt("encoder_layers", "only an encoder-decoder model has encoder layers"));
  }
  HEADROOM_ASSIGN_OR_RETURN(m.hidden, PositiveInt(doc, "hidden", 1e6));
  HEADROOM_ASSIGN_OR_RETURN(m.heads, PositiveInt(doc, "heads", 1e4));
  HEADROOM_ASSIGN_OR_RETURN(m.kv_heads, PositiveInt(doc, "kv_heads", m.heads));
  if (m.heads % m.kv_heads != 0) {
    return Fail(doc.ErrorAt("kv_heads", "must divide heads (grouped-query attention)"));
  }
  m.head_dim = m.hidden / m.heads;
  if (doc.Has("head_dim")) {
    HEADROOM_ASSIGN_OR_RETURN(m.head_dim, PositiveInt(doc, "head_dim", 1e4));
  } else if (m.hidden % m.heads != 0) {
    return Fail(doc.ErrorAt("heads", "must divide hidden, or give head_dim"));
  }
  HEADROOM_ASSIGN_OR_RETURN(m.ffn, PositiveInt(doc, "ffn", 1e7));
  HEADROOM_ASSIGN_OR_RETURN(m.ffn_gated, doc.Bool("ffn_gated"));
  HEADROOM_ASSIGN_OR_RETURN(m.vocab, PositiveInt(doc, "vocab", 1e8));
  HEADROOM_ASSIGN_OR_RETURN(m.tied_embeddings, doc.Bool("tied_embeddings"));
  HEADROOM_ASSIGN_OR_RETURN(std::string dtype, doc.String("dtype"));
  if (dtype == "bf16" || dtype == "fp16") {
    m.bytes_per_param = 2;
  } else if (dtype == "fp8" || dtype == "int8") {
    m.bytes_per_param = 1;
  } else if (dtype == "fp32") {
    m.bytes_per_param = 4;
  } else {
    return Fail(
        doc.ErrorAt("dtype", fmt::format("'{}' is not bf16, fp16, fp8, int8 or fp32", dtype)));
  }
  HEADROOM_ASSIGN_OR_RETURN(m.max_context, PositiveInt(doc, "max_context", 1e8));

  const double derived_b = m.TotalParams() / 1e9;
  if (std::abs(derived_b / m.parameters_b - 1.0) > kParameterTolerance) {
    return Fail(doc.ErrorAt(
        "parameters_b",
        fmt::format("the layer sizes give {:.2f} B parameters, not {} B: check layers, hidden, "
                    "heads, kv_heads, ffn and vocab",
                    derived_b, m.parameters_b)));
  }
  return m;
}

Result<ModelCatalog> ModelCatalog::FromFiles(std::span<const SourceFile> files) {
  ModelCatalog catalog;
  NameRegistry names;
  for (const SourceFile& file : files) {
    HEADROOM_ASSIGN_OR_RETURN(YamlReader doc, YamlReader::Parse(file.text, file.path));
    HEADROOM_ASSIGN_OR_RETURN(model::ModelSpec spec, ParseModelSpec(doc));
    HEADROOM_RETURN_IF_ERROR(names.Claim(spec.name, spec.aliases, file.path));
    catalog.models_.push_back(std::move(spec));
  }
  std::sort(catalog.models_.begin(), catalog.models_.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return catalog;
}

Result<ModelCatalog> ModelCatalog::LoadDirectory(const std::string& dir) {
  HEADROOM_ASSIGN_OR_RETURN(std::vector<SourceFile> files, ReadYamlDirectory(dir));
  return FromFiles(files);
}

Result<ModelCatalog> ModelCatalog::Embedded() {
  return FromFiles(FromEmbedded(EmbeddedModelFiles()));
}

Result<const model::ModelSpec*> ModelCatalog::Model(std::string_view name) const {
  return FindByName(models_, name, "model");
}

}  // namespace headroom::catalog
