#include "core/yaml_reader.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace headroom::core {
namespace {

std::string Key(std::string_view key) { return std::string(key); }

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

Result<YamlReader> YamlReader::Parse(std::string_view text, std::string source) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    return Fail(Error::InvalidArgument(
        fmt::format("{}:{}: malformed YAML: {}", source, e.mark.line + 1, e.msg)));
  }
  HEADROOM_RETURN_IF_ERROR(CheckNoDuplicateKeys(root, source));
  if (!root.IsMap()) {
    return Fail(Error::InvalidArgument(
        fmt::format("{}: expected a YAML mapping (key: value lines) at the top level", source)));
  }
  return YamlReader(root, std::move(source), "");
}

std::string YamlReader::FieldPath(std::string_view key) const {
  if (path_.empty()) return Key(key);
  if (key.empty()) return path_;
  return path_ + "." + Key(key);
}

Error YamlReader::ErrorAt(std::string_view key, std::string_view message) const {
  YAML::Mark mark = node_.Mark();
  if (!key.empty() && node_.IsMap()) {
    const YAML::Node child = node_[Key(key)];
    if (child.IsDefined()) mark = child.Mark();
  }
  const std::string location =
      mark.is_null() ? source_ : fmt::format("{}:{}", source_, mark.line + 1);
  const std::string field = FieldPath(key);
  if (field.empty()) return Error::InvalidArgument(fmt::format("{}: {}", location, message));
  return Error::InvalidArgument(fmt::format("{}: field '{}': {}", location, field, message));
}

bool YamlReader::Has(std::string_view key) const { return node_[Key(key)].IsDefined(); }

std::vector<std::string> YamlReader::Keys() const {
  std::vector<std::string> keys;
  for (const auto& entry : node_) keys.push_back(entry.first.Scalar());
  return keys;
}

Result<YAML::Node> YamlReader::Required(std::string_view key) const {
  const YAML::Node child = node_[Key(key)];
  if (!child.IsDefined() || child.IsNull()) return Fail(ErrorAt(key, "missing"));
  return child;
}

Result<double> YamlReader::Number(std::string_view key) const {
  HEADROOM_ASSIGN_OR_RETURN(YAML::Node child, Required(key));
  double value = 0;
  if (!child.IsScalar() || !YAML::convert<double>::decode(child, value) || !std::isfinite(value)) {
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
  HEADROOM_ASSIGN_OR_RETURN(YAML::Node child, Required(key));
  if (!child.IsScalar()) return Fail(ErrorAt(key, "expected a string"));
  return child.Scalar();
}

Result<std::optional<std::string>> YamlReader::OptionalString(std::string_view key) const {
  if (!Has(key)) return std::optional<std::string>();
  HEADROOM_ASSIGN_OR_RETURN(std::string value, String(key));
  return std::optional<std::string>(std::move(value));
}

Result<bool> YamlReader::Bool(std::string_view key) const {
  HEADROOM_ASSIGN_OR_RETURN(YAML::Node child, Required(key));
  bool value = false;
  if (!child.IsScalar() || !YAML::convert<bool>::decode(child, value)) {
    return Fail(ErrorAt(key, "expected true or false"));
  }
  return value;
}

Result<std::vector<std::string>> YamlReader::StringList(std::string_view key) const {
  std::vector<std::string> out;
  const YAML::Node child = node_[Key(key)];
  if (!child.IsDefined() || child.IsNull()) return out;
  if (!child.IsSequence()) return Fail(ErrorAt(key, "expected a list such as [a, b]"));
  for (const YAML::Node& item : child) {
    if (!item.IsScalar()) return Fail(ErrorAt(key, "expected a list of strings"));
    out.push_back(item.Scalar());
  }
  return out;
}

Result<YamlReader> YamlReader::Map(std::string_view key) const {
  HEADROOM_ASSIGN_OR_RETURN(YAML::Node child, Required(key));
  if (!child.IsMap()) return Fail(ErrorAt(key, "expected a mapping of key: value"));
  return YamlReader(child, source_, FieldPath(key));
}

Result<std::vector<YamlReader>> YamlReader::MapList(std::string_view key) const {
  std::vector<YamlReader> out;
  const YAML::Node child = node_[Key(key)];
  if (!child.IsDefined() || child.IsNull()) return out;
  if (!child.IsSequence()) return Fail(ErrorAt(key, "expected a list of mappings"));
  for (std::size_t i = 0; i < child.size(); ++i) {
    const YAML::Node item = child[i];
    YamlReader reader(item, source_, fmt::format("{}[{}]", FieldPath(key), i));
    if (!item.IsMap()) return Fail(reader.ErrorAt("", "expected a mapping of key: value"));
    out.push_back(std::move(reader));
  }
  return out;
}

Status YamlReader::CheckKnownKeys(std::initializer_list<std::string_view> known) const {
  for (const auto& entry : node_) {
    const std::string key = entry.first.Scalar();
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (std::string_view k : known) list += (list.empty() ? "" : ", ") + Key(k);
      return Fail(ErrorAt(key, fmt::format("unknown field (known: {})", list)));
    }
  }
  return Ok();
}

}  // namespace headroom::core
