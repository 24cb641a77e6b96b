#include "catalog/source_files.h"

#include <algorithm>
#include <filesystem>

#include "core/files.h"

namespace headroom::catalog {

core::Result<std::vector<SourceFile>> ReadYamlDirectory(const std::string& dir) {
  std::error_code ec;
  std::vector<std::string> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".yaml") paths.push_back(entry.path().string());
  }
  if (ec) {
    return core::Fail(core::Error::NotFound(fmt::format("directory {}: {}", dir, ec.message())));
  }
  if (paths.empty()) {
    return core::Fail(core::Error::NotFound(fmt::format("directory {}: no *.yaml files", dir)));
  }
  std::sort(paths.begin(), paths.end());
  std::vector<SourceFile> files;
  for (const auto& path : paths) {
    HEADROOM_ASSIGN_OR_RETURN(std::string text, core::ReadFile(path));
    files.push_back({path, std::move(text)});
  }
  return files;
}

std::vector<SourceFile> FromEmbedded(std::span<const core::EmbeddedFile> files) {
  std::vector<SourceFile> out;
  for (const core::EmbeddedFile& f : files) {
    out.push_back({std::string(f.path), std::string(f.parse_text())});
  }
  return out;
}

std::vector<std::string> LookupKeys(const std::string& name,
                                    const std::vector<std::string>& aliases) {
  std::vector<std::string> keys{core::ToLower(name)};
  for (const auto& a : aliases) keys.push_back(core::ToLower(a));
  return keys;
}

core::Status NameRegistry::Claim(const std::string& name, const std::vector<std::string>& aliases,
                                 const std::string& path) {
  for (const auto& key : LookupKeys(name, aliases)) {
    auto [it, inserted] = owner_.emplace(key, path);
    if (!inserted) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("{}: name or alias '{}' is already used by {}", path, key, it->second)));
    }
  }
  return core::Ok();
}

}  // namespace headroom::catalog
