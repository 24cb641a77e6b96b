#include "format/json_fields.h"

#include <filesystem>
#include <limits>

#include <fmt/format.h>

#include "core/files.h"

namespace headroom::format {
namespace {

using json = nlohmann::json;

const json& Empty() {
  static const json empty = json::object();
  return empty;
}

}  // namespace

const json* FieldReader::Lookup(const json& j, const std::string& key) {
  if (!j.is_object()) return nullptr;
  const auto it = j.find(key);
  return it != j.end() ? &*it : nullptr;
}

template <typename Check>
const json* FieldReader::Expect(const json* v, const std::string& path, const char* what,
                                Check check) {
  if (v != nullptr && check(*v)) return v;
  if (!error_) {
    error_ = core::Error::InvalidArgument(
        fmt::format("{}: field '{}' is {} (expected {}; the file `{}` writes)", file_, path,
                    v == nullptr ? "missing" : "of the wrong type", what, writer_));
  }
  return nullptr;
}

double FieldReader::Number(const json* v, const std::string& path) {
  v = Expect(v, path, "a number", [](const json& x) { return x.is_number(); });
  return v != nullptr ? v->get<double>() : 0;
}

void FieldReader::Refuse(const json& value, const std::string& path, const std::string& what) {
  if (!error_) {
    error_ = core::Error::InvalidArgument(
        fmt::format("{}: field '{}' is {} (expected {}; the file `{}` writes)", file_, path,
                    value.dump(), what, writer_));
  }
}

std::uint64_t FieldReader::CountUpTo(const json* v, const std::string& path, std::uint64_t max) {
  v = Expect(v, path, "a count", [](const json& x) { return x.is_number(); });
  if (v == nullptr) return 0;
  // Parsed, a whole number >= 0 is unsigned and a negative one signed; anything else (2.0,
  // 1e300, 2^64) is a double.
  const bool whole =
      v->is_number_unsigned() || (v->is_number_integer() && v->get<std::int64_t>() >= 0);
  if (whole && v->get<std::uint64_t>() <= max) return v->get<std::uint64_t>();
  Refuse(*v, path, fmt::format("a count from 0 to {}", max));
  return 0;
}

int FieldReader::Integer(const json* v, const std::string& path) {
  v = Expect(v, path, "a whole number", [](const json& x) { return x.is_number(); });
  if (v == nullptr) return 0;
  constexpr int kMin = std::numeric_limits<int>::min();
  constexpr int kMax = std::numeric_limits<int>::max();
  if (v->is_number_unsigned() ? v->get<std::uint64_t>() <= static_cast<std::uint64_t>(kMax)
                              : v->is_number_integer() && v->get<std::int64_t>() >= kMin &&
                                    v->get<std::int64_t>() <= kMax) {
    return static_cast<int>(v->get<std::int64_t>());
  }
  Refuse(*v, path, fmt::format("a whole number from {} to {}", kMin, kMax));
  return 0;
}

std::string FieldReader::Text(const json* v, const std::string& path) {
  v = Expect(v, path, "a string", [](const json& x) { return x.is_string(); });
  return v != nullptr ? v->get<std::string>() : "";
}

bool FieldReader::Flag(const json* v, const std::string& path) {
  v = Expect(v, path, "true or false", [](const json& x) { return x.is_boolean(); });
  return v != nullptr && v->get<bool>();
}

const json& FieldReader::Object(const json* v, const std::string& path) {
  v = Expect(v, path, "an object", [](const json& x) { return x.is_object(); });
  return v != nullptr ? *v : Empty();
}

const json& FieldReader::List(const json* v, const std::string& path) {
  v = Expect(v, path, "a list", [](const json& x) { return x.is_array(); });
  return v != nullptr ? *v : Empty();
}

std::optional<double> FieldReader::OptionalNumber(const json* v, const std::string& path) {
  v = Expect(v, path, "a number or null",
             [](const json& x) { return x.is_number() || x.is_null(); });
  if (v == nullptr || v->is_null()) return std::nullopt;
  return v->get<double>();
}

core::Result<json> ReadJsonObject(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return core::Fail(core::Error::NotFound(fmt::format("{}: missing", path)));
  }
  HEADROOM_ASSIGN_OR_RETURN(std::string text, core::ReadFile(path));
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return core::Fail(core::Error::InvalidArgument(fmt::format("{}: not a JSON object", path)));
  }
  return j;
}

}  // namespace headroom::format
