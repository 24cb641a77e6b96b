// Strict, typed reading of the JSON files a report directory holds (plan.json, mig-plan.json,
// ...): every missing or mistyped field becomes one error naming the file and the field's path
// ("DIR/plan.json: field 'policies[1].max_servers' is of the wrong type"), so that `headroom
// report DIR` can say exactly what is wrong with a directory. Thread-compatible.
#ifndef HEADROOM_REPORT_JSON_FIELDS_H_
#define HEADROOM_REPORT_JSON_FIELDS_H_

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"

namespace headroom::report {

// Typed access to a parsed file's fields that keeps the first error; a missing or mistyped field
// reads as zero, false or empty, so that a reader can carry on and report once at the end.
// `at` is the path of the object holding `key` ("policies[1]." or "" at the top).
class JsonFields {
 public:
  // `file`: the path named in errors; `writer`: what writes such a file ("`headroom plan
  // --out`"), named in errors so that the reader knows where a good one comes from.
  JsonFields(std::string file, std::string writer)
      : file_(std::move(file)), writer_(std::move(writer)) {}

  double Number(const nlohmann::json& j, const std::string& key, const std::string& at);
  std::uint64_t Count(const nlohmann::json& j, const std::string& key, const std::string& at);
  std::string Text(const nlohmann::json& j, const std::string& key, const std::string& at);
  bool Flag(const nlohmann::json& j, const std::string& key, const std::string& at);
  const nlohmann::json& Object(const nlohmann::json& j, const std::string& key,
                               const std::string& at);
  const nlohmann::json& List(const nlohmann::json& j, const std::string& key,
                             const std::string& at);
  // A number or null (nullopt).
  std::optional<double> OptionalNumber(const nlohmann::json& j, const std::string& key,
                                       const std::string& at);

  const std::optional<core::Error>& error() const { return error_; }

 private:
  template <typename Check>
  const nlohmann::json* Find(const nlohmann::json& j, const std::string& key, const std::string& at,
                             const char* what, Check check);

  std::string file_;
  std::string writer_;
  std::optional<core::Error> error_;
};

// The JSON object in `path`. kNotFound when the file is missing (naming `dir` as not written by
// `writer`); kInvalidArgument when it is not a JSON object.
[[nodiscard]] core::Result<nlohmann::json> ReadJsonObjectFile(const std::string& path,
                                                              const std::string& writer);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_JSON_FIELDS_H_
