// Strict reading of the JSON files the reports' directories hold: typed access to fields that
// keeps the first error, naming the file, the field's path and the command that writes the file.
// And field tables: a persisted struct's JSON form spelled once, as a list of (key, member)
// entries that both its writer (WriteFields) and its reader (ReadFields) walk, so that the two
// cannot drift apart. Thread-compatible.
#ifndef HEADROOM_FORMAT_JSON_FIELDS_H_
#define HEADROOM_FORMAT_JSON_FIELDS_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "core/units.h"

namespace headroom::format {

// A missing or mistyped field reads as zero, empty or false, and the first such field is kept
// as the error: "DIR/plan.json: field 'policies[1].max_servers' is of the wrong type (expected a
// count; the file `headroom plan --out` writes)". `at` is the path of `j` ("" or "inputs.").
// The overloads taking `v` read a value already found (nullptr: missing) whose whole path is
// `path` ("week_seeds[2]").
class FieldReader {
 public:
  using json = nlohmann::json;

  // `writer`: the command that writes the file, e.g. "headroom plan --out".
  FieldReader(std::string file, std::string writer)
      : file_(std::move(file)), writer_(std::move(writer)) {}

  double Number(const json& j, const std::string& key, const std::string& at) {
    return Number(Lookup(j, key), at + key);
  }
  double Number(const json* v, const std::string& path);
  // A whole number from 0 to T's largest: 2.0, -1, 1e300 and, for an int, 2^31 are errors
  // naming the field, where a cast would wrap or be undefined.
  template <typename T = std::uint64_t>
  T Count(const json& j, const std::string& key, const std::string& at) {
    return Count<T>(Lookup(j, key), at + key);
  }
  template <typename T = std::uint64_t>
  T Count(const json* v, const std::string& path) {
    static_assert(std::is_integral_v<T>);
    return static_cast<T>(
        CountUpTo(v, path, static_cast<std::uint64_t>(std::numeric_limits<T>::max())));
  }
  // A whole number in int's range, negative ones included (an exit code).
  int Integer(const json& j, const std::string& key, const std::string& at) {
    return Integer(Lookup(j, key), at + key);
  }
  int Integer(const json* v, const std::string& path);
  std::string Text(const json& j, const std::string& key, const std::string& at) {
    return Text(Lookup(j, key), at + key);
  }
  std::string Text(const json* v, const std::string& path);
  bool Flag(const json& j, const std::string& key, const std::string& at) {
    return Flag(Lookup(j, key), at + key);
  }
  bool Flag(const json* v, const std::string& path);
  const json& Object(const json& j, const std::string& key, const std::string& at) {
    return Object(Lookup(j, key), at + key);
  }
  const json& Object(const json* v, const std::string& path);
  const json& List(const json& j, const std::string& key, const std::string& at) {
    return List(Lookup(j, key), at + key);
  }
  const json& List(const json* v, const std::string& path);
  // A number or null (nullopt).
  std::optional<double> OptionalNumber(const json& j, const std::string& key,
                                       const std::string& at) {
    return OptionalNumber(Lookup(j, key), at + key);
  }
  std::optional<double> OptionalNumber(const json* v, const std::string& path);

  const std::optional<core::Error>& error() const { return error_; }

  // j[key], or nullptr when `j` is not an object or lacks `key`.
  static const json* Lookup(const json& j, const std::string& key);

 private:
  std::uint64_t CountUpTo(const json* v, const std::string& path, std::uint64_t max);
  // Keeps "field 'PATH' is VALUE (expected WHAT; ...)" as the error if there is none yet.
  void Refuse(const json& value, const std::string& path, const std::string& what);
  template <typename Check>
  const json* Expect(const json* v, const std::string& path, const char* what, Check check);

  std::string file_;
  std::string writer_;
  std::optional<core::Error> error_;
};

// The JSON object in `path`. kNotFound when the file is missing; kInvalidArgument when it is not
// a JSON object.
[[nodiscard]] core::Result<nlohmann::json> ReadJsonObject(const std::string& path);

// Field tables. A table is a std::tuple of entries made by the functions below; WriteFields
// writes them in the table's order (the file's key order) and ReadFields reads them back through
// a FieldReader. A value's C++ type picks its JSON form: numbers (double, a core::Quantity as its
// value, an integer as a count, an int with `is_signed` as any whole number), strings, booleans,
// std::optional (null when empty) and std::vector (a list) of those; a struct with its own table.

struct FieldRules {
  // An int that may be negative (an exit code, a GPU index); else a count.
  bool is_signed = false;
  // Files written before the field existed lack it: reading leaves the member as it is.
  bool may_be_absent = false;
  // Not written when equal to T{} (with a table: when nullopt), and so may be absent.
  bool omit_empty = false;
};

template <typename Json, typename S, typename Table>
void WriteFields(Json& out, const S& s, const Table& table) {
  std::apply([&](const auto&... entry) { (entry.Write(out, s), ...); }, table);
}

// `j` is the object at path `at` ("" or "policies[1].").
template <typename S, typename Table>
void ReadFields(FieldReader& r, const nlohmann::json& j, const std::string& at, S& s,
                const Table& table) {
  std::apply([&](const auto&... entry) { (entry.Read(r, j, at, s), ...); }, table);
}

namespace fields_internal {

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsQuantity : std::false_type {};
template <typename Tag>
struct IsQuantity<core::Quantity<Tag>> : std::true_type {};

template <typename Json, typename T>
Json ValueJson(const T& v) {
  if constexpr (IsQuantity<T>::value) {
    return Json(v.value());
  } else if constexpr (IsOptional<T>::value) {
    return v ? ValueJson<Json>(*v) : Json(nullptr);
  } else if constexpr (IsVector<T>::value) {
    Json list = Json::array();
    for (const auto& e : v) list.push_back(ValueJson<Json>(e));
    return list;
  } else {
    return Json(v);
  }
}

template <typename T>
void ReadValue(FieldReader& r, const nlohmann::json* v, const std::string& path, FieldRules rules,
               T& out) {
  if constexpr (std::is_same_v<T, bool>) {
    out = r.Flag(v, path);
  } else if constexpr (std::is_same_v<T, int>) {
    out = rules.is_signed ? r.Integer(v, path) : r.Count<int>(v, path);
  } else if constexpr (std::is_integral_v<T>) {
    out = r.Count<T>(v, path);
  } else if constexpr (std::is_floating_point_v<T>) {
    out = r.Number(v, path);
  } else if constexpr (IsQuantity<T>::value) {
    out = T(r.Number(v, path));
  } else if constexpr (std::is_same_v<T, std::string>) {
    out = r.Text(v, path);
  } else if constexpr (std::is_same_v<T, std::optional<double>>) {
    out = r.OptionalNumber(v, path);
  } else if constexpr (IsOptional<T>::value) {
    if (v != nullptr && v->is_null()) {
      out.reset();
      return;
    }
    // Read into a value, then assigned: g++ 12 warns (maybe-uninitialized) on emplace() here.
    typename T::value_type value{};
    ReadValue(r, v, path, rules, value);
    out = std::move(value);
  } else if constexpr (IsVector<T>::value) {
    const nlohmann::json& list = r.List(v, path);
    out.assign(list.size(), {});
    for (std::size_t i = 0; i < list.size(); ++i) {
      ReadValue(r, &list[i], path + "[" + std::to_string(i) + "]", rules, out[i]);
    }
  } else {
    static_assert(IsVector<T>::value, "no JSON form for this type: give it a table");
  }
}

// A struct, an optional one (null when empty) or a list of them, each through `table`.
template <typename Json, typename T, typename Table>
Json TableValueJson(const T& v, const Table& table) {
  if constexpr (IsOptional<T>::value) {
    return v ? TableValueJson<Json>(*v, table) : Json(nullptr);
  } else if constexpr (IsVector<T>::value) {
    Json list = Json::array();
    for (const auto& e : v) list.push_back(TableValueJson<Json>(e, table));
    return list;
  } else {
    Json object = Json::object();
    WriteFields(object, v, table);
    return object;
  }
}

template <typename T, typename Table>
void ReadTableValue(FieldReader& r, const nlohmann::json* v, const std::string& path,
                    const Table& table, T& out) {
  if constexpr (IsOptional<T>::value) {
    if (v != nullptr && v->is_null()) {
      out.reset();
      return;
    }
    typename T::value_type value{};
    ReadTableValue(r, v, path, table, value);
    out = std::move(value);
  } else if constexpr (IsVector<T>::value) {
    const nlohmann::json& list = r.List(v, path);
    out.assign(list.size(), {});
    for (std::size_t i = 0; i < list.size(); ++i) {
      ReadTableValue(r, &list[i], path + "[" + std::to_string(i) + "]", table, out[i]);
    }
  } else {
    ReadFields(r, r.Object(v, path), path + ".", out, table);
  }
}

template <typename S, typename T>
struct ValueEntry {
  const char* key;
  T S::*member;
  FieldRules rules;

  template <typename Json>
  void Write(Json& out, const S& s) const {
    if (rules.omit_empty && s.*member == T{}) return;
    out[key] = ValueJson<Json>(s.*member);
  }
  void Read(FieldReader& r, const nlohmann::json& j, const std::string& at, S& s) const {
    const nlohmann::json* v = FieldReader::Lookup(j, key);
    if (v == nullptr && (rules.may_be_absent || rules.omit_empty)) return;
    ReadValue(r, v, at + key, rules, s.*member);
  }
};

template <typename S, typename T, typename Table>
struct TableEntry {
  const char* key;
  T S::*member;
  Table table;
  FieldRules rules;

  template <typename Json>
  void Write(Json& out, const S& s) const {
    if constexpr (IsOptional<T>::value) {
      if (rules.omit_empty && !(s.*member)) return;
    }
    out[key] = TableValueJson<Json>(s.*member, table);
  }
  void Read(FieldReader& r, const nlohmann::json& j, const std::string& at, S& s) const {
    const nlohmann::json* v = FieldReader::Lookup(j, key);
    if (v == nullptr && (rules.may_be_absent || rules.omit_empty)) return;
    ReadTableValue(r, v, at + key, table, s.*member);
  }
};

template <typename S, typename Table>
struct GroupEntry {
  const char* key;
  Table table;

  template <typename Json>
  void Write(Json& out, const S& s) const {
    out[key] = TableValueJson<Json>(s, table);
  }
  void Read(FieldReader& r, const nlohmann::json& j, const std::string& at, S& s) const {
    ReadFields(r, r.Object(j, key, at), at + key + ".", s, table);
  }
};

template <typename S, typename T, typename Table>
struct InlineEntry {
  T S::*member;
  Table table;

  template <typename Json>
  void Write(Json& out, const S& s) const {
    WriteFields(out, s.*member, table);
  }
  void Read(FieldReader& r, const nlohmann::json& j, const std::string& at, S& s) const {
    ReadFields(r, j, at, s.*member, table);
  }
};

template <typename S, typename Table>
struct WhenEntry {
  bool (*when)(const S&);
  Table table;

  template <typename Json>
  void Write(Json& out, const S& s) const {
    if (when(s)) WriteFields(out, s, table);
  }
  void Read(FieldReader& r, const nlohmann::json& j, const std::string& at, S& s) const {
    if (when(s)) ReadFields(r, j, at, s, table);
  }
};

template <typename S, typename F>
struct ComputedEntry {
  const char* key;
  F compute;

  template <typename Json>
  void Write(Json& out, const S& s) const {
    out[key] = ValueJson<Json>(compute(s));
  }
  void Read(FieldReader&, const nlohmann::json&, const std::string&, S&) const {}
};

}  // namespace fields_internal

// KEY holds the member's value.
template <typename S, typename T>
constexpr auto Field(const char* key, T S::*member, FieldRules rules = {}) {
  return fields_internal::ValueEntry<S, T>{key, member, rules};
}
// KEY holds the member (a struct, an optional one or a list of them) as objects through `table`.
template <typename S, typename T, typename... Entries>
constexpr auto Field(const char* key, T S::*member, std::tuple<Entries...> table,
                     FieldRules rules = {}) {
  return fields_internal::TableEntry<S, T, std::tuple<Entries...>>{key, member, table, rules};
}
// KEY holds an object of some of the struct's own fields (the file nests what the struct keeps
// flat: RunSummary's "row_power").
template <typename S, typename... Entries>
constexpr auto Group(const char* key, std::tuple<Entries...> table) {
  return fields_internal::GroupEntry<S, std::tuple<Entries...>>{key, table};
}
// The member's fields at this level (the file keeps flat what the struct nests).
template <typename S, typename T, typename... Entries>
constexpr auto Inline(T S::*member, std::tuple<Entries...> table) {
  return fields_internal::InlineEntry<S, T, std::tuple<Entries...>>{member, table};
}
// `table`'s fields only where `when` holds; reading, `when` sees the struct as read so far.
template <typename S, typename... Entries>
constexpr auto When(bool (*when)(const S&), std::tuple<Entries...> table) {
  return fields_internal::WhenEntry<S, std::tuple<Entries...>>{when, table};
}
// Written only: a value derived from the struct for the file's other readers (scripts, `jq`),
// which headroom's reader derives again rather than trusting.
template <typename S, typename F>
constexpr auto Computed(const char* key, F compute) {
  return fields_internal::ComputedEntry<S, F>{key, compute};
}

// `v` (a struct, an optional one or a list of them) as JSON through `table`.
template <typename Json = nlohmann::ordered_json, typename T, typename Table>
Json TableJson(const T& v, const Table& table) {
  return fields_internal::TableValueJson<Json>(v, table);
}

}  // namespace headroom::format

#endif  // HEADROOM_FORMAT_JSON_FIELDS_H_
