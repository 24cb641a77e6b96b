// YamlReader: strict, typed access to one YAML mapping of a config or data file. Every error
// names the file, the line and the dotted field path ("a100.yaml:7: field 'power_limit_w.min':
// expected a number"). Unknown keys are errors, so a typo is never silently ignored.
// Thread-compatible.
#ifndef HEADROOM_CORE_YAML_READER_H_
#define HEADROOM_CORE_YAML_READER_H_

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "core/result.h"

namespace headroom::core {

class YamlReader {
 public:
  // Parses `text`; `source` names it in errors (usually the file path). The top level must be a
  // mapping.
  [[nodiscard]] static Result<YamlReader> Parse(std::string_view text, std::string source);

  [[nodiscard]] Result<double> Number(std::string_view key) const;
  [[nodiscard]] Result<std::optional<double>> OptionalNumber(std::string_view key) const;
  // A number that must lie in [min, max].
  [[nodiscard]] Result<double> NumberIn(std::string_view key, double min, double max) const;
  // A whole number that must lie in [min, max].
  [[nodiscard]] Result<int> IntegerIn(std::string_view key, int min, int max) const;
  [[nodiscard]] Result<std::string> String(std::string_view key) const;
  [[nodiscard]] Result<std::optional<std::string>> OptionalString(std::string_view key) const;
  [[nodiscard]] Result<bool> Bool(std::string_view key) const;
  // Absent key -> empty list.
  [[nodiscard]] Result<std::vector<std::string>> StringList(std::string_view key) const;
  [[nodiscard]] Result<YamlReader> Map(std::string_view key) const;
  // A list of mappings (e.g. `agents: [{name: a}, ...]`); each item's errors name it
  // "key[i]". Absent key -> empty list.
  [[nodiscard]] Result<std::vector<YamlReader>> MapList(std::string_view key) const;
  [[nodiscard]] bool Has(std::string_view key) const;
  // The keys of this mapping, in document order.
  std::vector<std::string> Keys() const;

  // Fails on the first key of this mapping not in `known`.
  [[nodiscard]] Status CheckKnownKeys(std::initializer_list<std::string_view> known) const;

  // An InvalidArgument error located at `key` of this mapping (or at the mapping itself when
  // `key` is empty).
  Error ErrorAt(std::string_view key, std::string_view message) const;

  const std::string& source() const { return source_; }

 private:
  YamlReader(YAML::Node node, std::string source, std::string path)
      : node_(std::move(node)), source_(std::move(source)), path_(std::move(path)) {}

  [[nodiscard]] Result<YAML::Node> Required(std::string_view key) const;
  std::string FieldPath(std::string_view key) const;

  YAML::Node node_;
  std::string source_;
  std::string path_;  // dotted path of this mapping from the document root; empty at the root
};

}  // namespace headroom::core

#endif  // HEADROOM_CORE_YAML_READER_H_
