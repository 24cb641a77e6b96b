#include "core/yaml_reader.h"

#include <gtest/gtest.h>

namespace headroom::core {
namespace {

constexpr char kDoc[] = R"(name: a100
tdp_w: 400
limits:
  min: 100
  max: abc
aliases: [x, y]
flag: yes
)";

TEST(YamlReaderTest, ReadsTypedFields) {
  auto doc = YamlReader::Parse(kDoc, "gpu.yaml");
  ASSERT_TRUE(doc);
  EXPECT_EQ(*doc->String("name"), "a100");
  EXPECT_DOUBLE_EQ(*doc->Number("tdp_w"), 400);
  EXPECT_EQ(*doc->StringList("aliases"), (std::vector<std::string>{"x", "y"}));
  EXPECT_TRUE(*doc->Bool("flag"));
  EXPECT_TRUE(doc->StringList("absent")->empty());
  EXPECT_FALSE(doc->OptionalNumber("absent")->has_value());
}

TEST(YamlReaderTest, ErrorsNameFileLineAndField) {
  auto doc = YamlReader::Parse(kDoc, "gpu.yaml");
  ASSERT_TRUE(doc);
  auto limits = doc->Map("limits");
  ASSERT_TRUE(limits);
  auto bad = limits->Number("max");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "gpu.yaml:5: field 'limits.max': expected a number");

  auto missing = doc->Number("idle_w");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().message(), "gpu.yaml:1: field 'idle_w': missing");

  auto range = doc->NumberIn("tdp_w", 0, 300);
  ASSERT_FALSE(range);
  EXPECT_NE(range.error().message().find("400 is outside [0, 300]"), std::string::npos);
}

TEST(YamlReaderTest, UnknownKeysAreErrors) {
  auto doc = YamlReader::Parse("name: a\ntdp: 3\n", "f.yaml");
  ASSERT_TRUE(doc);
  auto st = doc->CheckKnownKeys({"name", "tdp_w"});
  ASSERT_FALSE(st);
  EXPECT_NE(st.error().message().find("f.yaml:2: field 'tdp': unknown field"), std::string::npos)
      << st.error().message();
}

TEST(YamlReaderTest, MalformedYamlAndNonMappingAreErrors) {
  auto broken = YamlReader::Parse("a: [1, 2\nb: 3\n", "broken.yaml");
  ASSERT_FALSE(broken);
  EXPECT_NE(broken.error().message().find("broken.yaml:"), std::string::npos);
  EXPECT_NE(broken.error().message().find("malformed YAML"), std::string::npos);
  EXPECT_FALSE(YamlReader::Parse("- 1\n- 2\n", "list.yaml"));
}

TEST(YamlReaderTest, MapListNamesEachItemInErrors) {
  auto doc = YamlReader::Parse("agents:\n  - {name: a, w: 1}\n  - {name: b, w: x}\n", "row.yaml");
  ASSERT_TRUE(doc);
  auto items = doc->MapList("agents");
  ASSERT_TRUE(items);
  ASSERT_EQ(items->size(), 2u);
  EXPECT_EQ(*(*items)[0].String("name"), "a");
  auto bad = (*items)[1].Number("w");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().message(), "row.yaml:3: field 'agents[1].w': expected a number");
  EXPECT_TRUE(doc->MapList("absent")->empty());
  auto scalar = YamlReader::Parse("agents: [1, 2]\n", "row.yaml");
  ASSERT_TRUE(scalar);
  ASSERT_FALSE(scalar->MapList("agents"));
}

// yaml-cpp keeps the first of two equal keys; the reader refuses the file instead, at any depth.
TEST(YamlReaderTest, DuplicateKeysAreErrorsWithTheLine) {
  auto top = YamlReader::Parse("budget_w: 15600\nname: r\nbudget_w: 1\n", "row.yaml");
  ASSERT_FALSE(top);
  EXPECT_EQ(top.error().message(), "row.yaml:3: field 'budget_w' is given twice");
  auto nested = YamlReader::Parse("agents:\n  - {name: a, url: x, name: b}\n", "row.yaml");
  ASSERT_FALSE(nested);
  EXPECT_NE(nested.error().message().find("field 'name' is given twice"), std::string::npos);
  EXPECT_TRUE(YamlReader::Parse("a: {x: 1}\nb: {x: 2}\n", "ok.yaml"));
}

}  // namespace
}  // namespace headroom::core
