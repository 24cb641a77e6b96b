// Strict reading of the JSON files the reports' directories hold: typed access to fields that
// keeps the first error, naming the file, the field's path and the command that writes the file.
// Thread-compatible.
#ifndef HEADROOM_FORMAT_JSON_FIELDS_H_
#define HEADROOM_FORMAT_JSON_FIELDS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace headroom::format {

// A missing or mistyped field reads as zero, empty or false, and the first such field is kept
// as the error: "DIR/plan.json: field 'policies[1].max_servers' is of the wrong type (expected a
// count; the file `headroom plan --out` writes)". `at` is the path of `j` ("" or "inputs.").
class FieldReader {
 public:
  using json = nlohmann::json;

  // `writer`: the command that writes the file, e.g. "headroom plan --out".
  FieldReader(std::string file, std::string writer)
      : file_(std::move(file)), writer_(std::move(writer)) {}

  double Number(const json& j, const std::string& key, const std::string& at);
  // A whole number from 0 to T's largest: 2.0, -1, 1e300 and, for an int, 2^31 are errors
  // naming the field, where a cast would wrap or be undefined.
  template <typename T = std::uint64_t>
  T Count(const json& j, const std::string& key, const std::string& at) {
    static_assert(std::is_integral_v<T>);
    return static_cast<T>(
        CountUpTo(j, key, at, static_cast<std::uint64_t>(std::numeric_limits<T>::max())));
  }
  // A whole number in int's range, negative ones included (an exit code).
  int Integer(const json& j, const std::string& key, const std::string& at);
  std::string Text(const json& j, const std::string& key, const std::string& at);
  bool Flag(const json& j, const std::string& key, const std::string& at);
  const json& Object(const json& j, const std::string& key, const std::string& at);
  const json& List(const json& j, const std::string& key, const std::string& at);
  // A number or null (nullopt).
  std::optional<double> OptionalNumber(const json& j, const std::string& key,
                                       const std::string& at);

  const std::optional<core::Error>& error() const { return error_; }

 private:
  std::uint64_t CountUpTo(const json& j, const std::string& key, const std::string& at,
                          std::uint64_t max);
  // Keeps "field 'KEY' is VALUE (expected WHAT; ...)" as the error if there is none yet.
  void Refuse(const json& value, const std::string& key, const std::string& at,
              const std::string& what);
  template <typename Check>
  const json* Find(const json& j, const std::string& key, const std::string& at, const char* what,
                   Check check);

  std::string file_;
  std::string writer_;
  std::optional<core::Error> error_;
};

// The JSON object in `path`. kNotFound when the file is missing; kInvalidArgument when it is not
// a JSON object.
[[nodiscard]] core::Result<nlohmann::json> ReadJsonObject(const std::string& path);

}  // namespace headroom::format

#endif  // HEADROOM_FORMAT_JSON_FIELDS_H_
