#include "catalog/mig_catalog.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "catalog/embedded_data.h"
#include "core/parse.h"

namespace headroom::catalog {
namespace {

using core::Error;
using core::Fail;
using core::Result;
using core::Status;
using core::YamlReader;

Status ParseEngines(const YamlReader& doc, mig::Engines& engines) {
  HEADROOM_ASSIGN_OR_RETURN(YamlReader map, doc.Map("engines"));
  HEADROOM_RETURN_IF_ERROR(map.CheckKnownKeys({"copy", "decoders", "encoders", "jpeg", "ofa"}));
  HEADROOM_ASSIGN_OR_RETURN(engines.copy, map.IntegerIn("copy", 0, 64));
  HEADROOM_ASSIGN_OR_RETURN(engines.decoders, map.IntegerIn("decoders", 0, 64));
  HEADROOM_ASSIGN_OR_RETURN(engines.encoders, map.IntegerIn("encoders", 0, 64));
  HEADROOM_ASSIGN_OR_RETURN(engines.jpeg, map.IntegerIn("jpeg", 0, 64));
  HEADROOM_ASSIGN_OR_RETURN(engines.ofa, map.IntegerIn("ofa", 0, 64));
  return core::Ok();
}

// Start slots: ascending, each leaving room for the placement within the GPU's memory slices.
Status ParseStarts(const YamlReader& doc, int last_start, std::vector<int>& starts) {
  HEADROOM_ASSIGN_OR_RETURN(std::vector<std::string> texts, doc.StringList("starts"));
  if (texts.empty()) return Fail(doc.ErrorAt("starts", "no start slots"));
  for (const std::string& text : texts) {
    auto start = core::ParseInteger(text);
    if (!start || *start < 0 || *start > last_start) {
      return Fail(doc.ErrorAt(
          "starts", fmt::format("start slot '{}' is not in [0, {}] (the placement must fit)", text,
                                last_start)));
    }
    if (!starts.empty() && *start <= starts.back()) {
      return Fail(doc.ErrorAt("starts", "start slots must be ascending and distinct"));
    }
    starts.push_back(static_cast<int>(*start));
  }
  return core::Ok();
}

Result<mig::GiProfile> ParseProfile(const YamlReader& doc, const mig::GpuMigSpec& spec) {
  HEADROOM_RETURN_IF_ERROR(
      doc.CheckKnownKeys({"id", "nvml", "name", "short_name", "compute_slices", "memory_slices",
                          "sm_count", "memory_gib", "engines", "starts", "max_instances"}));
  mig::GiProfile p;
  HEADROOM_ASSIGN_OR_RETURN(p.id, doc.IntegerIn("id", 0, 1000));
  HEADROOM_ASSIGN_OR_RETURN(p.nvml_enum, doc.String("nvml"));
  const auto value = mig::NvmlGpuInstanceProfileValue(p.nvml_enum);
  if (!value) {
    return Fail(doc.ErrorAt("nvml", fmt::format("'{}' is not an NVML GPU-instance profile "
                                                "constant (without NVML_)",
                                                p.nvml_enum)));
  }
  p.nvml_value = *value;
  HEADROOM_ASSIGN_OR_RETURN(p.name, doc.String("name"));
  HEADROOM_ASSIGN_OR_RETURN(p.short_name, doc.String("short_name"));
  p.media_extension = p.name.ends_with("+me");
  if (p.media_extension != p.short_name.ends_with("+me")) {
    return Fail(doc.ErrorAt("short_name", "a \"+me\" profile needs a \"+me\" short name"));
  }
  HEADROOM_ASSIGN_OR_RETURN(p.compute_slices,
                            doc.IntegerIn("compute_slices", 1, spec.compute_slices));
  HEADROOM_ASSIGN_OR_RETURN(p.memory_slices, doc.IntegerIn("memory_slices", 1, spec.memory_slices));
  HEADROOM_ASSIGN_OR_RETURN(p.sm_count, doc.IntegerIn("sm_count", 1, 100000));
  HEADROOM_ASSIGN_OR_RETURN(p.memory_gib, doc.NumberIn("memory_gib", 0.001, 1e5));
  HEADROOM_RETURN_IF_ERROR(ParseEngines(doc, p.engines));
  HEADROOM_RETURN_IF_ERROR(ParseStarts(doc, spec.memory_slices - p.memory_slices, p.starts));
  HEADROOM_ASSIGN_OR_RETURN(p.max_instances, doc.IntegerIn("max_instances", 1, spec.memory_slices));
  return p;
}

}  // namespace

Result<mig::GpuMigSpec> ParseGpuMigSpec(const YamlReader& doc) {
  HEADROOM_RETURN_IF_ERROR(doc.CheckKnownKeys(
      {"kind", "gpu", "aliases", "memory_slices", "compute_slices", "profiles"}));
  mig::GpuMigSpec spec;
  HEADROOM_ASSIGN_OR_RETURN(spec.name, doc.String("gpu"));
  HEADROOM_ASSIGN_OR_RETURN(spec.aliases, doc.StringList("aliases"));
  // The memory-slice mask of the enumeration holds at most 32 slices.
  HEADROOM_ASSIGN_OR_RETURN(spec.memory_slices, doc.IntegerIn("memory_slices", 1, 32));
  HEADROOM_ASSIGN_OR_RETURN(spec.compute_slices, doc.IntegerIn("compute_slices", 1, 32));
  HEADROOM_ASSIGN_OR_RETURN(std::vector<YamlReader> profiles, doc.MapList("profiles"));
  if (profiles.empty()) return Fail(doc.ErrorAt("profiles", "no profiles"));
  std::set<int> ids;
  std::set<std::string> names;
  for (const YamlReader& item : profiles) {
    HEADROOM_ASSIGN_OR_RETURN(mig::GiProfile profile, ParseProfile(item, spec));
    if (!ids.insert(profile.id).second) {
      return Fail(item.ErrorAt("id", fmt::format("profile ID {} appears twice", profile.id)));
    }
    for (const std::string& name : {profile.name, profile.short_name}) {
      if (!names.insert(core::ToLower(name)).second) {
        return Fail(item.ErrorAt("name", fmt::format("profile name '{}' appears twice", name)));
      }
    }
    spec.profiles.push_back(std::move(profile));
  }
  return spec;
}

Result<MigCatalog> MigCatalog::FromFiles(std::span<const SourceFile> files) {
  MigCatalog catalog;
  NameRegistry names;
  for (const SourceFile& file : files) {
    HEADROOM_ASSIGN_OR_RETURN(YamlReader doc, YamlReader::Parse(file.text, file.path));
    HEADROOM_ASSIGN_OR_RETURN(std::string kind, doc.String("kind"));
    if (kind != "mig") return Fail(doc.ErrorAt("kind", fmt::format("'{}' is not mig", kind)));
    HEADROOM_ASSIGN_OR_RETURN(mig::GpuMigSpec spec, ParseGpuMigSpec(doc));
    HEADROOM_RETURN_IF_ERROR(names.Claim(spec.name, spec.aliases, file.path));
    catalog.gpus_.push_back(std::move(spec));
  }
  std::sort(catalog.gpus_.begin(), catalog.gpus_.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return catalog;
}

Result<MigCatalog> MigCatalog::LoadDirectory(const std::string& dir) {
  HEADROOM_ASSIGN_OR_RETURN(std::vector<SourceFile> files, ReadYamlDirectory(dir));
  return FromFiles(files);
}

Result<MigCatalog> MigCatalog::Embedded() { return FromFiles(FromEmbedded(EmbeddedMigFiles())); }

Result<const mig::GpuMigSpec*> MigCatalog::Gpu(std::string_view name) const {
  return FindByName(gpus_, name, "MIG GPU type");
}

Result<const mig::GpuMigSpec*> MigCatalog::Find(std::string_view name,
                                                const HardwareCatalog& hardware) const {
  auto direct = Gpu(name);
  if (direct) return direct;
  auto gpu = hardware.Gpu(name);
  if (!gpu) return direct;
  auto by_canonical = Gpu((*gpu)->name);
  if (by_canonical) return by_canonical;
  return Fail(Error::NotFound(
      fmt::format("GPU type '{}' ({}) has no MIG profiles in the catalog", name, (*gpu)->name)));
}

}  // namespace headroom::catalog
