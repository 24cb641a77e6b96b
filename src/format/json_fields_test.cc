#include "format/json_fields.h"

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

namespace headroom::format {
namespace {

using nlohmann::json;

const json kNumbers = json::parse(R"({"int_max": 2147483647, "int_over": 2147483648,
    "uint64_max": 18446744073709551615, "two": 2.0, "half": 0.5, "minus": -1, "huge": 1e300,
    "text": "7", "exit": -15})");

// The first error's message, or "" if none.
std::string FirstError(const FieldReader& r) { return r.error() ? r.error()->message() : ""; }

// Issue 44, finding 9: counts read as uint64 and cast to int wrapped at 2^31.
TEST(FieldReaderTest, ACountIsWholeAndWithinItsType) {
  FieldReader ok("f.json", "headroom x");
  EXPECT_EQ(ok.Count<int>(kNumbers, "int_max", ""), 2147483647);
  EXPECT_EQ(ok.Count(kNumbers, "uint64_max", ""), UINT64_MAX);
  EXPECT_EQ(ok.Count<long>(kNumbers, "int_over", ""), 2147483648L);
  EXPECT_EQ(FirstError(ok), "");

  const std::string range = "a count from 0 to 2147483647; the file `headroom x` writes)";
  for (const auto& [key, shown] : {std::pair<std::string, std::string>{"int_over", "2147483648"},
                                   {"two", "2.0"},
                                   {"half", "0.5"},
                                   {"minus", "-1"},
                                   {"huge", "1e+300"}}) {
    FieldReader r("f.json", "headroom x");
    EXPECT_EQ(r.Count<int>(kNumbers, key, "at."), 0);
    EXPECT_EQ(FirstError(r), "f.json: field 'at." + key + "' is " + shown + " (expected " + range);
  }
  FieldReader text("f.json", "headroom x");
  text.Count<int>(kNumbers, "text", "");
  EXPECT_EQ(FirstError(text),
            "f.json: field 'text' is of the wrong type (expected a count; the file `headroom x` "
            "writes)");
}

// Issue 44, finding 9: `exit_code: 1e300` went through an undefined double-to-int cast.
TEST(FieldReaderTest, AnIntegerIsWholeAndWithinInt) {
  FieldReader ok("summary.json", "headroom measure --out");
  EXPECT_EQ(ok.Integer(kNumbers, "exit", ""), -15);
  EXPECT_EQ(ok.Integer(kNumbers, "int_max", ""), 2147483647);
  EXPECT_EQ(FirstError(ok), "");
  for (const char* key : {"huge", "two", "int_over", "uint64_max"}) {
    FieldReader r("summary.json", "headroom measure --out");
    EXPECT_EQ(r.Integer(kNumbers, key, ""), 0);
    EXPECT_NE(FirstError(r).find(std::string("summary.json: field '") + key + "' is "),
              std::string::npos)
        << FirstError(r);
    EXPECT_NE(FirstError(r).find("(expected a whole number from -2147483648 to 2147483647"),
              std::string::npos)
        << FirstError(r);
  }
}

struct Inner {
  int count = 0;
  std::optional<double> limit_w = {};
};
struct Outer {
  std::string name = {};
  int exit_code = 0;
  core::Watts power{0};
  double flat_a = 0;  // in the file under "nested"
  Inner inner = {};
  std::vector<Inner> list = {};
  std::optional<Inner> maybe = {};
  std::string note = {};  // omitted when empty
  bool detailed = false;
  double detail = 0;  // only when detailed
};

bool Detailed(const Outer& o) { return o.detailed; }

constexpr auto kInnerFields =
    std::tuple{Field("count", &Inner::count), Field("limit_w", &Inner::limit_w)};
constexpr auto kOuterFields =
    std::tuple{Field("name", &Outer::name),
               Field("exit_code", &Outer::exit_code, {.is_signed = true}),
               Field("power_w", &Outer::power),
               Group<Outer>("nested", std::tuple{Field("a", &Outer::flat_a)}),
               Field("inner", &Outer::inner, kInnerFields),
               Inline(&Outer::inner, std::tuple{Field("inner_count", &Inner::count)}),
               Field("list", &Outer::list, kInnerFields),
               Field("maybe", &Outer::maybe, kInnerFields),
               Field("note", &Outer::note, {.omit_empty = true}),
               Field("detailed", &Outer::detailed),
               When(&Detailed, std::tuple{Field("detail", &Outer::detail)}),
               Computed<Outer>("twice_a", [](const Outer& o) { return 2 * o.flat_a; })};

TEST(FieldTableTest, WritesInTheTablesOrderAndReadsBack) {
  const Outer o{.name = "x",
                .exit_code = -2,
                .power = core::Watts(300),
                .flat_a = 1.5,
                .inner = {.count = 3, .limit_w = 250},
                .list = {{.count = 4}, {.count = 5, .limit_w = 1}},
                .maybe = std::nullopt,
                .note = "",
                .detailed = true,
                .detail = 7};
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  WriteFields(j, o, kOuterFields);
  EXPECT_EQ(j.dump(),
            R"({"name":"x","exit_code":-2,"power_w":300.0,"nested":{"a":1.5},)"
            R"("inner":{"count":3,"limit_w":250.0},"inner_count":3,)"
            R"("list":[{"count":4,"limit_w":null},{"count":5,"limit_w":1.0}],"maybe":null,)"
            R"("detailed":true,"detail":7.0,"twice_a":3.0})");
  FieldReader r("f.json", "headroom x");
  Outer back;
  ReadFields(r, json::parse(j.dump()), "", back, kOuterFields);
  ASSERT_EQ(FirstError(r), "");
  EXPECT_EQ(back.name, "x");
  EXPECT_EQ(back.exit_code, -2);
  EXPECT_EQ(back.power, core::Watts(300));
  EXPECT_EQ(back.flat_a, 1.5);
  EXPECT_EQ(back.inner.count, 3);
  EXPECT_EQ(back.inner.limit_w, 250);
  ASSERT_EQ(back.list.size(), 2u);
  EXPECT_FALSE(back.list[0].limit_w);
  EXPECT_EQ(back.list[1].count, 5);
  EXPECT_FALSE(back.maybe);
  EXPECT_EQ(back.note, "");
  EXPECT_EQ(back.detail, 7);
}

TEST(FieldTableTest, ErrorsNameThePathThroughListsAndObjects) {
  const auto read = [](const std::string& text) {
    FieldReader r("f.json", "headroom x");
    Outer o;
    ReadFields(r, json::parse(text), "", o, kOuterFields);
    return FirstError(r);
  };
  const std::string good =
      R"({"name":"x","exit_code":0,"power_w":1,"nested":{"a":1},"inner":{"count":1,)"
      R"("limit_w":null},"inner_count":1,"list":[{"count":1,"limit_w":null},)"
      R"({"count":1,"limit_w":null}],"maybe":{"count":1,"limit_w":null},"detailed":false})";
  EXPECT_EQ(read(good), "");  // no "note" (omitted when empty), no "detail" (not detailed)
  json bad = json::parse(good);
  bad["list"][1]["count"] = -1;
  EXPECT_EQ(read(bad.dump()),
            "f.json: field 'list[1].count' is -1 (expected a count from 0 to 2147483647; the "
            "file `headroom x` writes)");
  bad = json::parse(good);
  bad["list"][0] = 3;
  EXPECT_EQ(read(bad.dump()),
            "f.json: field 'list[0]' is of the wrong type (expected an object; the file "
            "`headroom x` writes)");
  bad = json::parse(good);
  bad["nested"].erase("a");
  EXPECT_EQ(read(bad.dump()),
            "f.json: field 'nested.a' is missing (expected a number; the file `headroom x` "
            "writes)");
  bad = json::parse(good);
  bad["detailed"] = true;
  EXPECT_EQ(read(bad.dump()),
            "f.json: field 'detail' is missing (expected a number; the file `headroom x` writes)");
}

}  // namespace
}  // namespace headroom::format
