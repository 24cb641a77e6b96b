// YamlReader: strict, typed access to one YAML mapping of a config or data file. Every error
// names the file, the line and the dotted field path ("a100.yaml:7: field 'power_limit_w.min':
// expected a number"). Unknown keys are errors, so a typo is never silently ignored.
//
// The document is read into a plain tree once. A file compiled into the binary can carry that
// tree already made at build time (TreeText: the same document as JSON, every scalar kept as its
// YAML text), which parses several times faster than YAML and means exactly the same; its
// errors name the file without a line. Thread-compatible.
#ifndef HEADROOM_CORE_YAML_READER_H_
#define HEADROOM_CORE_YAML_READER_H_

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace headroom::core {

class YamlReader {
 public:
  // Parses `text`, YAML or a TreeText; `source` names it in errors (usually the file path). The
  // top level must be a mapping.
  [[nodiscard]] static Result<YamlReader> Parse(std::string_view text, std::string source);
  // The YAML document `text` as a tree to embed (see above), with Parse's checks and errors.
  [[nodiscard]] static Result<std::string> TreeText(std::string_view text, std::string source);
  // Whether `text` is a TreeText.
  static bool IsTreeText(std::string_view text);

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

  struct Node;  // the document's tree (yaml_reader.cc)

 private:
  YamlReader(std::shared_ptr<const Node> root, const Node* node, std::string source,
             std::string path)
      : root_(std::move(root)), node_(node), source_(std::move(source)), path_(std::move(path)) {}

  const Node* Find(std::string_view key) const;  // nullptr when absent
  [[nodiscard]] Result<const Node*> Required(std::string_view key) const;
  std::string FieldPath(std::string_view key) const;

  std::shared_ptr<const Node> root_;  // keeps node_ alive
  const Node* node_;                  // a mapping
  std::string source_;
  std::string path_;  // dotted path of this mapping from the document root; empty at the root
};

}  // namespace headroom::core

#endif  // HEADROOM_CORE_YAML_READER_H_
