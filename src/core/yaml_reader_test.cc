#include "core/yaml_reader.h"

#include <string>

#include <fmt/format.h>
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

namespace headroom::core {
namespace {

// Everything a reader can be asked of one document, as text: the same for the YAML and for its
// TreeText.
std::string Reading(const YamlReader& doc) {
  std::string out;
  for (const std::string& key : doc.Keys()) {
    out += key + "=";
    if (auto n = doc.Number(key)) {
      out += fmt::format("n:{:.17g} ", *n);
    } else if (auto b = doc.Bool(key)) {
      out += fmt::format("b:{} ", *b);
    } else if (auto s = doc.String(key)) {
      out += "s:" + *s + " ";
    } else if (auto list = doc.StringList(key)) {
      for (const std::string& item : *list) out += "l:" + item + " ";
    } else if (auto map = doc.Map(key)) {
      out += "{" + Reading(*map) + "} ";
    } else if (auto maps = doc.MapList(key)) {
      for (const YamlReader& item : *maps) out += "[" + Reading(item) + "] ";
    } else {
      out += "error:" + doc.Number(key).error().message() + " ";
    }
  }
  return out;
}

constexpr char kEveryKind[] = R"(name: "a100 # not a comment"
big: 1.5e12
hex_is_text: 0x1A
inf: .inf
yes_word: yes
quoted_true: "true"
tilde: ~
quoted_tilde: "~"
empty:
nested: {a: 1, b: [x, "y, z"], c: {d: -0.000001}}
rows:
  - {name: r1, w: 7}
  - name: r2
    w: 8.25
)";

TEST(YamlReaderTest, ATreeTextReadsAsItsYaml) {
  auto yaml = YamlReader::Parse(kEveryKind, "every.yaml");
  ASSERT_TRUE(yaml) << yaml.error().message();
  auto tree_text = YamlReader::TreeText(kEveryKind, "every.yaml");
  ASSERT_TRUE(tree_text) << tree_text.error().message();
  EXPECT_TRUE(YamlReader::IsTreeText(*tree_text));
  EXPECT_FALSE(YamlReader::IsTreeText(kEveryKind));
  auto tree = YamlReader::Parse(*tree_text, "every.yaml");
  ASSERT_TRUE(tree) << tree.error().message();
  const std::string reading = Reading(*yaml);
  EXPECT_EQ(Reading(*tree), reading);
  // The reading above exercises the kinds it is meant to.
  EXPECT_NE(reading.find("big=n:1500000000000 "), std::string::npos) << reading;
  EXPECT_NE(reading.find("quoted_tilde=s:~ "), std::string::npos) << reading;
  EXPECT_NE(reading.find("rows=[name=s:r1 w=n:7 ] [name=s:r2 w=n:8.25 ]"), std::string::npos)
      << reading;
  EXPECT_EQ(yaml->Number("tilde").error().message(), "every.yaml:7: field 'tilde': missing");
  // A tree's errors name the file and the field, without a line.
  EXPECT_EQ(tree->Number("tilde").error().message(), "every.yaml: field 'tilde': missing");
  EXPECT_EQ(tree->CheckKnownKeys({"name"}).error().message().rfind("every.yaml: field 'big'", 0),
            0u);
}

TEST(YamlReaderTest, ATreeTextKeepsYamlsChecks) {
  auto twice = YamlReader::TreeText("a: 1\na: 2\n", "twice.yaml");
  ASSERT_FALSE(twice);
  EXPECT_EQ(twice.error().message(), "twice.yaml:2: field 'a' is given twice");
  EXPECT_FALSE(YamlReader::TreeText("a: [1,\n", "broken.yaml"));
  auto not_a_map = YamlReader::Parse(*YamlReader::TreeText("- 1\n", "list.yaml"), "list.yaml");
  ASSERT_FALSE(not_a_map);
  EXPECT_NE(not_a_map.error().message().find("at the top level"), std::string::npos);
  auto torn = YamlReader::Parse("# headroom-tree 1\n{\"a\": ", "torn.yaml");
  ASSERT_FALSE(torn);
  EXPECT_EQ(torn.error().message(), "torn.yaml: malformed embedded tree");
}

}  // namespace
}  // namespace headroom::core
