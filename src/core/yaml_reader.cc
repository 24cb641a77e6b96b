#include "core/yaml_reader.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace headroom::core {

struct YamlReader::Node {
  enum class Kind : std::uint8_t { kNull, kScalar, kMap, kSequence };
  Kind kind = Kind::kNull;
  int line = -1;                  // 0-based; -1 when unknown (a TreeText)
  std::string text;               // kScalar: the scalar as written
  std::vector<std::string> keys;  // kMap, in document order
  std::vector<Node> values;       // kMap: the value of keys[i]; kSequence: the items
};

namespace {

using Node = YamlReader::Node;
using ordered_json = nlohmann::ordered_json;

// The first line of a TreeText. A YAML comment, so the rest (JSON, which is YAML too) still reads
// as the same document if it ever went through a YAML parser.
constexpr std::string_view kTreeTextMagic = "# headroom-tree 1\n";

std::string Key(std::string_view key) { return std::string(key); }

Node FromYaml(const YAML::Node& yaml) {
  Node node;
  node.line = yaml.Mark().is_null() ? -1 : yaml.Mark().line;
  switch (yaml.Type()) {
    case YAML::NodeType::Scalar:
      node.kind = Node::Kind::kScalar;
      node.text = yaml.Scalar();
      break;
    case YAML::NodeType::Map:
      node.kind = Node::Kind::kMap;
      for (const auto& entry : yaml) {
        node.keys.push_back(entry.first.IsScalar() ? entry.first.Scalar() : "");
        node.values.push_back(FromYaml(entry.second));
      }
      break;
    case YAML::NodeType::Sequence:
      node.kind = Node::Kind::kSequence;
      for (const YAML::Node& item : yaml) node.values.push_back(FromYaml(item));
      break;
    case YAML::NodeType::Null:
    case YAML::NodeType::Undefined:
      break;
  }
  return node;
}

ordered_json ToJson(const Node& node) {
  switch (node.kind) {
    case Node::Kind::kScalar:
      return node.text;
    case Node::Kind::kMap: {
      ordered_json j = ordered_json::object();
      for (std::size_t i = 0; i < node.keys.size(); ++i) j[node.keys[i]] = ToJson(node.values[i]);
      return j;
    }
    case Node::Kind::kSequence: {
      ordered_json j = ordered_json::array();
      for (const Node& item : node.values) j.push_back(ToJson(item));
      return j;
    }
    case Node::Kind::kNull:
      break;
  }
  return nullptr;
}

Node FromJson(const ordered_json& j) {
  Node node;
  if (j.is_string()) {
    node.kind = Node::Kind::kScalar;
    node.text = j.get<std::string>();
  } else if (j.is_object()) {
    node.kind = Node::Kind::kMap;
    for (const auto& [key, value] : j.items()) {
      node.keys.push_back(key);
      node.values.push_back(FromJson(value));
    }
  } else if (j.is_array()) {
    node.kind = Node::Kind::kSequence;
    for (const ordered_json& item : j) node.values.push_back(FromJson(item));
  }
  return node;
}

// yaml-cpp keeps the first of two equal keys and drops the second without a word; a file that
// says `budget_w` twice is a mistake to point at, not to resolve silently.
Status CheckNoDuplicateKeys(const YAML::Node& node, const std::string& source) {
  if (node.IsMap()) {
    std::vector<std::string> seen;
    for (const auto& entry : node) {
      const std::string key = entry.first.IsScalar() ? entry.first.Scalar() : "";
      if (entry.first.IsScalar()) {
        if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
          return Fail(Error::InvalidArgument(fmt::format("{}:{}: field '{}' is given twice", source,
                                                         entry.first.Mark().line + 1, key)));
        }
        seen.push_back(key);
      }
      HEADROOM_RETURN_IF_ERROR(CheckNoDuplicateKeys(entry.second, source));
    }
  } else if (node.IsSequence()) {
    for (const YAML::Node& item : node)
      HEADROOM_RETURN_IF_ERROR(CheckNoDuplicateKeys(item, source));
  }
  return Ok();
}

}  // namespace

namespace {

// The YAML document `text` as a tree, checked: well-formed, no key given twice.
Result<Node> ParseYaml(std::string_view text, const std::string& source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Fail(Error::InvalidArgument(
        fmt::format("{}:{}: malformed YAML: {}", source, e.mark.line + 1, e.msg)));
  }
  HEADROOM_RETURN_IF_ERROR(CheckNoDuplicateKeys(root, source));
  return FromYaml(root);
}

}  // namespace

bool YamlReader::IsTreeText(std::string_view text) { return text.starts_with(kTreeTextMagic); }

Result<YamlReader> YamlReader::Parse(std::string_view text, std::string source) {
  Node root;
  if (IsTreeText(text)) {
    const ordered_json tree = ordered_json::parse(text.substr(kTreeTextMagic.size()), nullptr,
                                                  /*allow_exceptions=*/false);
    if (tree.is_discarded()) {
      return Fail(Error::InvalidArgument(fmt::format("{}: malformed embedded tree", source)));
    }
    root = FromJson(tree);
  } else {
    HEADROOM_ASSIGN_OR_RETURN(root, ParseYaml(text, source));
  }
  if (root.kind != Node::Kind::kMap) {
    return Fail(Error::InvalidArgument(
        fmt::format("{}: expected a YAML mapping (key: value lines) at the top level", source)));
  }
  auto shared = std::make_shared<const Node>(std::move(root));
  const Node* top = shared.get();
  return YamlReader(std::move(shared), top, std::move(source), "");
}

Result<std::string> YamlReader::TreeText(std::string_view text, std::string source) {
  HEADROOM_ASSIGN_OR_RETURN(Node root, ParseYaml(text, source));
  return std::string(kTreeTextMagic) + ToJson(root).dump() + "\n";
}

const YamlReader::Node* YamlReader::Find(std::string_view key) const {
  for (std::size_t i = 0; i < node_->keys.size(); ++i) {
    if (node_->keys[i] == key) return &node_->values[i];
  }
  return nullptr;
}

std::string YamlReader::FieldPath(std::string_view key) const {
  if (path_.empty()) return Key(key);
  if (key.empty()) return path_;
  return path_ + "." + Key(key);
}

Error YamlReader::ErrorAt(std::string_view key, std::string_view message) const {
  int line = node_->line;
  if (!key.empty()) {
    if (const Node* child = Find(key); child != nullptr) line = child->line;
  }
  const std::string location = line < 0 ? source_ : fmt::format("{}:{}", source_, line + 1);
  const std::string field = FieldPath(key);
  if (field.empty()) return Error::InvalidArgument(fmt::format("{}: {}", location, message));
  return Error::InvalidArgument(fmt::format("{}: field '{}': {}", location, field, message));
}

bool YamlReader::Has(std::string_view key) const { return Find(key) != nullptr; }

std::vector<std::string> YamlReader::Keys() const { return node_->keys; }

Result<const YamlReader::Node*> YamlReader::Required(std::string_view key) const {
  const Node* child = Find(key);
  if (child == nullptr || child->kind == Node::Kind::kNull) return Fail(ErrorAt(key, "missing"));
  return child;
}

Result<double> YamlReader::Number(std::string_view key) const {
  HEADROOM_ASSIGN_OR_RETURN(const Node* child, Required(key));
  double value = 0;
  // yaml-cpp's own reading of a scalar as a number (".inf", "1e3", ...), from its text.
  if (child->kind != Node::Kind::kScalar ||
      !YAML::convert<double>::decode(YAML::Node(child->text), value) || !std::isfinite(value)) {
    return Fail(ErrorAt(key, "expected a number"));
  }
  return value;
}

Result<std::optional<double>> YamlReader::OptionalNumber(std::string_view key) const {
  if (!Has(key)) return std::optional<double>();
  HEADROOM_ASSIGN_OR_RETURN(double value, Number(key));
  return std::optional<double>(value);
}

Result<double> YamlReader::NumberIn(std::string_view key, double min, double max) const {
  HEADROOM_ASSIGN_OR_RETURN(double value, Number(key));
  if (value < min || value > max) {
    return Fail(ErrorAt(key, fmt::format("{} is outside [{}, {}]", value, min, max)));
  }
  return value;
}

Result<int> YamlReader::IntegerIn(std::string_view key, int min, int max) const {
  HEADROOM_ASSIGN_OR_RETURN(double value, NumberIn(key, min, max));
  if (value != static_cast<int>(value)) {
    return Fail(ErrorAt(key, fmt::format("{} is not a whole number", value)));
  }
  return static_cast<int>(value);
}

Result<std::string> YamlReader::String(std::string_view key) const {
  HEADROOM_ASSIGN_OR_RETURN(const Node* child, Required(key));
  if (child->kind != Node::Kind::kScalar) return Fail(ErrorAt(key, "expected a string"));
  return child->text;
}

Result<std::optional<std::string>> YamlReader::OptionalString(std::string_view key) const {
  if (!Has(key)) return std::optional<std::string>();
  HEADROOM_ASSIGN_OR_RETURN(std::string value, String(key));
  return std::optional<std::string>(std::move(value));
}

Result<bool> YamlReader::Bool(std::string_view key) const {
  HEADROOM_ASSIGN_OR_RETURN(const Node* child, Required(key));
  bool value = false;
  if (child->kind != Node::Kind::kScalar ||
      !YAML::convert<bool>::decode(YAML::Node(child->text), value)) {
    return Fail(ErrorAt(key, "expected true or false"));
  }
  return value;
}

Result<std::vector<std::string>> YamlReader::StringList(std::string_view key) const {
  std::vector<std::string> out;
  const Node* child = Find(key);
  if (child == nullptr || child->kind == Node::Kind::kNull) return out;
  if (child->kind != Node::Kind::kSequence) {
    return Fail(ErrorAt(key, "expected a list such as [a, b]"));
  }
  for (const Node& item : child->values) {
    if (item.kind != Node::Kind::kScalar) return Fail(ErrorAt(key, "expected a list of strings"));
    out.push_back(item.text);
  }
  return out;
}

Result<YamlReader> YamlReader::Map(std::string_view key) const {
  HEADROOM_ASSIGN_OR_RETURN(const Node* child, Required(key));
  if (child->kind != Node::Kind::kMap) {
    return Fail(ErrorAt(key, "expected a mapping of key: value"));
  }
  return YamlReader(root_, child, source_, FieldPath(key));
}

Result<std::vector<YamlReader>> YamlReader::MapList(std::string_view key) const {
  std::vector<YamlReader> out;
  const Node* child = Find(key);
  if (child == nullptr || child->kind == Node::Kind::kNull) return out;
  if (child->kind != Node::Kind::kSequence)
    return Fail(ErrorAt(key, "expected a list of mappings"));
  for (std::size_t i = 0; i < child->values.size(); ++i) {
    const Node& item = child->values[i];
    YamlReader reader(root_, &item, source_, fmt::format("{}[{}]", FieldPath(key), i));
    if (item.kind != Node::Kind::kMap) {
      return Fail(reader.ErrorAt("", "expected a mapping of key: value"));
    }
    out.push_back(std::move(reader));
  }
  return out;
}

Status YamlReader::CheckKnownKeys(std::initializer_list<std::string_view> known) const {
  for (const std::string& key : node_->keys) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (std::string_view k : known) list += (list.empty() ? "" : ", ") + Key(k);
      return Fail(ErrorAt(key, fmt::format("unknown field (known: {})", list)));
    }
  }
  return Ok();
}

}  // namespace headroom::core
