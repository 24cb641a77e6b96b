#include "mig/enumerate.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "catalog/testing/embedded_catalogs.h"

namespace headroom::mig {
namespace {

using catalog::testing::MigGpu;

std::vector<const GiProfile*> Profiles(const GpuMigSpec& spec,
                                       const std::vector<std::string>& classes) {
  std::vector<const GiProfile*> profiles;
  for (const std::string& c : classes) {
    profiles.push_back(spec.FindProfileOrClass(c));
    EXPECT_NE(profiles.back(), nullptr) << c;
  }
  return profiles;
}

const std::vector<std::string> kClassic = {"1g", "2g", "3g", "4g", "7g"};
const std::vector<std::string> kWithTwoSliceOneG = {"1g", "1g.2x", "2g", "3g", "4g", "7g"};

// ../shared/brief/mig.md: "Using only 1g/2g/3g/4g/7g there are 19 maximal placements (14 distinct
// multisets) on A100; adding the 2-memory-slice 1g gives 78 maximal placements (38 multisets)".
TEST(EnumerateTest, ClassicProfilesGive19PlacementsAnd14Multisets) {
  for (const char* gpu : {"a100-40gb-sxm", "a100-80gb-sxm"}) {
    const GpuMigSpec& spec = MigGpu(gpu);
    const auto layouts = EnumerateMaximalLayouts(spec, Profiles(spec, kClassic));
    EXPECT_EQ(layouts.size(), 19u) << gpu;
    EXPECT_EQ(CountDistinctMultisets(layouts), 14) << gpu;
  }
}

TEST(EnumerateTest, TwoSliceOneGGives78PlacementsAnd38Multisets) {
  for (const char* gpu : {"a100-40gb-sxm", "a100-80gb-sxm"}) {
    const GpuMigSpec& spec = MigGpu(gpu);
    const auto layouts = EnumerateMaximalLayouts(spec, Profiles(spec, kWithTwoSliceOneG));
    EXPECT_EQ(layouts.size(), 78u) << gpu;
    EXPECT_EQ(CountDistinctMultisets(layouts), 38) << gpu;
  }
}

// Placements are identical on these GPUs, so every GPU gives the same counts.
TEST(EnumerateTest, EveryGpuGivesTheSameCounts) {
  for (const GpuMigSpec& spec : catalog::testing::EmbeddedMig().gpus()) {
    EXPECT_EQ(EnumerateMaximalLayouts(spec, Profiles(spec, kClassic)).size(), 19u) << spec.name;
    EXPECT_EQ(EnumerateMaximalLayouts(spec, Profiles(spec, kWithTwoSliceOneG)).size(), 78u)
        << spec.name;
  }
}

TEST(EnumerateTest, LayoutsAreValidMaximalCanonicalAndDistinct) {
  const GpuMigSpec& spec = MigGpu("a100-80gb-sxm");
  std::vector<std::string> all_classes;
  for (const GiProfile& p : spec.profiles) all_classes.push_back(p.short_name);
  const auto profiles = Profiles(spec, all_classes);
  const auto layouts = EnumerateMaximalLayouts(spec, profiles);
  ASSERT_FALSE(layouts.empty());
  for (size_t i = 0; i < layouts.size(); ++i) {
    const std::string text = FormatLayout(layouts[i]);
    EXPECT_TRUE(ValidateLayout(spec, layouts[i])) << text;
    EXPECT_EQ(layouts[i], Canonical(layouts[i])) << text;
    if (i > 0) {
      EXPECT_LT(FormatLayout(layouts[i - 1]), text);
    }
    // Maximal: adding any instance of any chosen profile breaks a rule.
    for (const GiProfile* p : profiles) {
      for (int start : p->starts) {
        Layout more = layouts[i];
        more.instances.push_back({.profile = p->name, .start = start});
        EXPECT_FALSE(ValidateLayout(spec, more)) << text << " + " << p->name << "@" << start;
      }
    }
  }
}

TEST(EnumerateTest, ClassicA100LayoutsAreTheKnownOnes) {
  const GpuMigSpec& spec = MigGpu("a100-80gb-sxm");
  std::vector<std::string> texts;
  for (const Layout& layout : EnumerateMaximalLayouts(spec, Profiles(spec, {"3g", "4g", "7g"}))) {
    texts.push_back(FormatLayout(layout));
  }
  EXPECT_EQ(texts,
            (std::vector<std::string>{"3g.40gb@0,3g.40gb@4", "4g.40gb@0,3g.40gb@4", "7g.80gb@0"}));
}

TEST(EnumerateTest, NoProfilesGiveTheEmptyLayout) {
  const auto layouts = EnumerateMaximalLayouts(MigGpu("a100-80gb-sxm"), {});
  ASSERT_EQ(layouts.size(), 1u);
  EXPECT_TRUE(layouts[0].instances.empty());
}

std::vector<std::string> Texts(const std::vector<Layout>& layouts) {
  std::vector<std::string> out;
  for (const Layout& layout : layouts) out.push_back(FormatLayout(layout));
  return out;
}

TEST(EnumerateTest, OnePerMultisetKeepsTheFirstOfEachFewestInstancesFirst) {
  const GpuMigSpec& spec = MigGpu("a100-80gb-sxm");
  const auto all = EnumerateMaximalLayouts(spec, Profiles(spec, kClassic));
  const std::vector<Layout> distinct = OnePerMultiset(all);
  ASSERT_EQ(distinct.size(), 14u);
  EXPECT_EQ(FormatLayout(distinct.front()), "7g.80gb@0");
  EXPECT_EQ(distinct.back().instances.size(), 7u);
  for (size_t i = 1; i < distinct.size(); ++i) {
    EXPECT_LE(distinct[i - 1].instances.size(), distinct[i].instances.size());
  }
  // Of the placements of one multiset, the first in text order stays.
  for (const Layout& kept : distinct) {
    EXPECT_NE(std::find(all.begin(), all.end(), kept), all.end()) << FormatLayout(kept);
  }
  EXPECT_EQ(OnePerMultiset(distinct).size(), distinct.size());
}

TEST(EnumerateTest, ProfilesNamedTakesClassesAndNamesOnce) {
  const GpuMigSpec& spec = MigGpu("a100-80gb-sxm");
  auto profiles = ProfilesNamed(spec, "1g, 3g.40gb,7g");
  ASSERT_TRUE(profiles) << profiles.error().message();
  ASSERT_EQ(profiles->size(), 3u);
  EXPECT_EQ((*profiles)[1]->name, "3g.40gb");

  auto unknown = ProfilesNamed(spec, "1g,9g");
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().code(), core::Code::kInvalidArgument);
  EXPECT_NE(unknown.error().message().find("no profile '9g' on a100-80gb-sxm (known: 1g"),
            std::string::npos)
      << unknown.error().message();

  auto repeated = ProfilesNamed(spec, "1g,1g.10gb");
  ASSERT_FALSE(repeated);
  EXPECT_EQ(repeated.error().message(), "'1g.10gb' (1g.10gb) is listed twice");
}

TEST(EnumerateTest, EqualInstanceLayoutsAreSevenThreeTwoAndOneG) {
  const GpuMigSpec& spec = MigGpu("a100-80gb-sxm");
  std::vector<int> counts;
  std::vector<Layout> layouts;
  for (const auto& [count, layout] : EqualInstanceLayouts(spec)) {
    counts.push_back(count);
    layouts.push_back(layout);
  }
  EXPECT_EQ(counts, (std::vector<int>{1, 2, 3, 7}));
  EXPECT_EQ(Texts(layouts)[1], "3g.40gb@0,3g.40gb@4");
  for (const Layout& layout : layouts) EXPECT_TRUE(ValidateLayout(spec, layout));
}

TEST(EnumerateTest, ParseValidLayoutsStopsAtTheFirstBadOne) {
  const GpuMigSpec& spec = MigGpu("a100-80gb-sxm");
  const std::vector<std::string> good = {"7g.80gb@0", "3g.40gb@4,4g.40gb@0"};
  auto parsed = ParseValidLayouts(spec, good);
  ASSERT_TRUE(parsed) << parsed.error().message();
  EXPECT_EQ(Texts(*parsed), (std::vector<std::string>{"7g.80gb@0", "4g.40gb@0,3g.40gb@4"}));

  const std::vector<std::string> overlap = {"7g.80gb@0", "4g.40gb@0,2g.20gb@2"};
  auto invalid = ParseValidLayouts(spec, overlap);
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().message(),
            ValidateLayout(spec, *ParseLayout(overlap[1])).error().message());

  const std::vector<std::string> malformed = {"3g@x"};
  EXPECT_FALSE(ParseValidLayouts(spec, malformed));
}

// MIG off first; then the layouts given, or one per multiset of the classes' maximal layouts.
TEST(SweepLayoutsTest, MigOffFirstThenGivenOrOnePerMultiset) {
  const GpuMigSpec& spec = MigGpu("a100-80gb-sxm");
  auto all = SweepLayouts(spec, {}, "1g,2g,3g,4g,7g");
  ASSERT_TRUE(all) << all.error().message();
  ASSERT_EQ(all->size(), 15u);  // MIG off + 14 multisets
  EXPECT_FALSE(all->front().has_value());
  EXPECT_EQ(FormatLayout(*all->at(1)), "7g.80gb@0");
  const std::vector<std::string> given = {"3g.40gb@4,3g.40gb@0"};
  auto two = SweepLayouts(spec, given, "no-such-class");  // the classes are not read
  ASSERT_TRUE(two) << two.error().message();
  ASSERT_EQ(two->size(), 2u);
  EXPECT_EQ(two->at(1)->instances.size(), 2u);
}

TEST(SweepLayoutsTest, TheErrorOfWhicheverInputWasUsed) {
  const GpuMigSpec& spec = MigGpu("a100-80gb-sxm");
  EXPECT_FALSE(SweepLayouts(spec, {}, "9g"));
  const std::vector<std::string> overlapping = {"4g.40gb@0,4g.40gb@0"};
  EXPECT_FALSE(SweepLayouts(spec, overlapping, "1g"));
}

}  // namespace
}  // namespace headroom::mig
