#include "format/json_fields.h"

#include <cstdint>
#include <string>

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

}  // namespace
}  // namespace headroom::format
