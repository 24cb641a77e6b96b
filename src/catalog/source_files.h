// What the catalogs share: reading a directory of YAML files or the embedded copies, and lookup
// of a spec by canonical name or alias (case-insensitive). Thread-safe (no state).
#ifndef HEADROOM_CATALOG_SOURCE_FILES_H_
#define HEADROOM_CATALOG_SOURCE_FILES_H_

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "core/embedded_file.h"
#include "core/parse.h"
#include "core/result.h"

namespace headroom::catalog {

struct SourceFile {
  std::string path;  // names the file in errors
  std::string text;
};

// Every *.yaml file in `dir`, sorted by name. kNotFound when the directory is missing or empty.
[[nodiscard]] core::Result<std::vector<SourceFile>> ReadYamlDirectory(const std::string& dir);
std::vector<SourceFile> FromEmbedded(std::span<const core::EmbeddedFile> files);

// Lower-cased names under which an entry can be found; the first is canonical.
std::vector<std::string> LookupKeys(const std::string& name,
                                    const std::vector<std::string>& aliases);

// Names and aliases already taken across a set of files, so that each can be claimed once.
class NameRegistry {
 public:
  // kInvalidArgument "<path>: name or alias '<key>' is already used by <other path>".
  [[nodiscard]] core::Status Claim(const std::string& name, const std::vector<std::string>& aliases,
                                   const std::string& path);

 private:
  std::map<std::string, std::string> owner_;  // lookup key -> file that claimed it
};

// The spec whose name or alias matches `name`; kNotFound listing the known names otherwise.
template <class Spec>
core::Result<const Spec*> FindByName(const std::vector<Spec>& specs, std::string_view name,
                                     std::string_view what) {
  const std::string key = core::ToLower(core::Trim(name));
  std::string known;
  for (const Spec& spec : specs) {
    for (const auto& k : LookupKeys(spec.name, spec.aliases)) {
      if (k == key) return &spec;
    }
    known += (known.empty() ? "" : ", ") + spec.name;
  }
  return core::Fail(
      core::Error::NotFound(fmt::format("unknown {} '{}' (known: {})", what, name, known)));
}

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_SOURCE_FILES_H_
