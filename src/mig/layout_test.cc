#include "mig/layout.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "catalog/testing/embedded_catalogs.h"

namespace headroom::mig {
namespace {

using catalog::testing::MigGpu;

// The reason ValidateLayout gives for `text` on `gpu`, or "" when the layout is valid.
std::string Reason(const std::string& gpu, const std::string& text) {
  auto layout = ParseLayout(text);
  EXPECT_TRUE(layout) << layout.error().message();
  if (!layout) return "unparsed";
  auto status = ValidateLayout(MigGpu(gpu), *layout);
  return status ? "" : status.error().message();
}

TEST(LayoutTest, ParsesTheCanonicalForm) {
  auto layout = ParseLayout("3g.40gb@0,2g.20gb@4,1g.10gb@6");
  ASSERT_TRUE(layout) << layout.error().message();
  ASSERT_EQ(layout->instances.size(), 3u);
  EXPECT_EQ(layout->instances[1], (GpuInstance{.profile = "2g.20gb", .start = 4}));
  EXPECT_EQ(FormatLayout(*layout), "3g.40gb@0,2g.20gb@4,1g.10gb@6");
}

TEST(LayoutTest, RoundTripsAndCanonicalizes) {
  for (const std::string text :
       {"7g.80gb@0", "3g.40gb@0,2g.20gb@4,1g.10gb@6", "1g.10gb@0,1g.10gb+me@1,1g.20gb@2",
        "4g.40gb@0/2c+1c+1c,3g.40gb@4/3c", "1g.5gb@0,1g.5gb@1,1g.5gb@2,1g.5gb@3"}) {
    auto layout = ParseLayout(text);
    ASSERT_TRUE(layout) << text << ": " << layout.error().message();
    EXPECT_EQ(FormatLayout(*layout), text);
    auto again = ParseLayout(FormatLayout(*layout));
    ASSERT_TRUE(again);
    EXPECT_EQ(Canonical(*again), Canonical(*layout));
  }
  auto shuffled = ParseLayout(" 1g.10gb@6 , 3g.40gb@0/1c+2c,2g.20gb@4");
  ASSERT_TRUE(shuffled);
  EXPECT_EQ(FormatLayout(*shuffled), "3g.40gb@0/2c+1c,2g.20gb@4,1g.10gb@6");
}

TEST(LayoutTest, ParseErrorsNameTheBadToken) {
  struct Case {
    std::string text, message;
  };
  for (const Case& c : std::vector<Case>{
           {"", "empty"},
           {"3g.40gb@0,,1g.10gb@6", "empty token"},
           {"3g.40gb@0,", "empty token"},
           {"3g.40gb", "'3g.40gb' is not of the form <profile>@<start slot>"},
           {"@4", "'@4' is not of the form"},
           {"3g.40gb@0,2g.20gb@x", "'2g.20gb@x': start slot 'x'"},
           {"3g.40gb@-1", "'3g.40gb@-1': start slot '-1'"},
           {"3g.40gb@0/2", "'3g.40gb@0/2': compute instance '2' is not of the form <n>c"},
           {"3g.40gb@0/2c+xc", "'3g.40gb@0/2c+xc': compute-instance size 'x'"},
       }) {
    auto layout = ParseLayout(c.text);
    ASSERT_FALSE(layout) << c.text;
    EXPECT_EQ(layout.error().code(), core::Code::kInvalidArgument);
    EXPECT_NE(layout.error().message().find(c.message), std::string::npos)
        << c.text << " -> " << layout.error().message();
  }
}

TEST(LayoutTest, AcceptsValidLayouts) {
  for (const std::string text :
       {"7g.80gb@0", "4g.40gb@0,3g.40gb@4", "3g.40gb@0,3g.40gb@4", "3g.40gb@0,2g.20gb@4,1g.10gb@6",
        "1g.20gb@0,1g.20gb@2,1g.20gb@4,1g.20gb@6",
        "1g.10gb@0,1g.10gb+me@1,1g.10gb@2,1g.10gb@3,1g.10gb@4,1g.10gb@5,1g.10gb@6",
        "4g.40gb@0/2c+2c", "7g.80gb@0/4c+3c", "2g.20gb@2"}) {
    EXPECT_EQ(Reason("a100-80gb-sxm", text), "") << text;
  }
  EXPECT_EQ(Reason("h200-141gb-sxm", "1g.18gb@0,1g.18gb@1,2g.35gb@2,3g.71gb@4"), "");
}

TEST(LayoutTest, RejectsEachRuleWithItsReason) {
  struct Case {
    std::string gpu, text, reason;
  };
  for (const Case& c : std::vector<Case>{
           // A profile of another GPU.
           {"a100-80gb-sxm", "1g.5gb@0",
            "'1g.5gb@0': profile 1g.5gb is not supported on a100-80gb-sxm (supported: 1g.10gb,"},
           {"h200-141gb-sxm", "3g.40gb@0", "profile 3g.40gb is not supported on h200-141gb-sxm"},
           // Start slots: 1g never at 7, 2g never at 6, 3g only at 0 or 4, 4g and 7g only at 0.
           {"a100-80gb-sxm", "1g.10gb@7",
            "'1g.10gb@7': 1g.10gb cannot start at memory slice 7 (allowed starts: 0, 1, 2, 3, 4, "
            "5, 6)"},
           {"a100-80gb-sxm", "2g.20gb@6", "2g.20gb cannot start at memory slice 6"},
           {"a100-80gb-sxm", "2g.20gb@1", "2g.20gb cannot start at memory slice 1"},
           {"a100-80gb-sxm", "3g.40gb@2",
            "3g.40gb cannot start at memory slice 2 (allowed "
            "starts: 0, 4)"},
           {"a100-80gb-sxm", "4g.40gb@4", "4g.40gb cannot start at memory slice 4"},
           {"a100-80gb-sxm", "1g.20gb@1", "1g.20gb cannot start at memory slice 1"},
           // Overlap, naming both instances and the shared slices.
           {"a100-80gb-sxm", "4g.40gb@0,2g.20gb@2",
            "'2g.20gb@2' overlaps '4g.40gb@0' on memory slices 2-3"},
           {"a100-80gb-sxm", "3g.40gb@4,1g.10gb@6",
            "'1g.10gb@6' overlaps '3g.40gb@4' on memory slice 6"},
           {"a100-80gb-sxm", "1g.10gb@3,1g.10gb@3", "'1g.10gb@3' overlaps '1g.10gb@3'"},
           // One "+me" per GPU.
           {"h100-80gb-sxm", "1g.10gb+me@0,1g.10gb+me@1",
            "'1g.10gb+me@1': only one \"+me\" instance per GPU, and '1g.10gb+me@0' already "
            "holds the media engines"},
           // Over max instances (before the overlap they would also cause).
           {"a100-80gb-sxm", "4g.40gb@0,4g.40gb@0", "'4g.40gb@0': more than 1 instance of 4g"},
           {"a100-80gb-sxm", "3g.40gb@0,3g.40gb@4,3g.40gb@0",
            "'3g.40gb@0': more than 2 instances of 3g.40gb"},
           // Compute instances.
           {"a100-80gb-sxm", "3g.40gb@0/2c+2c",
            "'3g.40gb@0/2c+2c': compute instances use 4 compute slices, the GPU instance has 3"},
           {"a100-80gb-sxm", "7g.80gb@0/5c", "no 5c compute instance in a 7-slice GPU instance"},
           {"a100-80gb-sxm", "2g.20gb@0/3c",
            "'2g.20gb@0/3c': no 3c compute instance in a 2-slice GPU instance (allowed: 1c, 2c)"},
           {"a100-80gb-sxm", "2g.20gb@0/0c", "no 0c compute instance"},
       }) {
    const std::string reason = Reason(c.gpu, c.text);
    EXPECT_NE(reason.find(c.reason), std::string::npos) << c.text << " -> " << reason;
  }
}

// The "+me" rule does not rest on max_instances: a catalog that allowed more still gets one.
TEST(LayoutTest, RejectsASecondMediaExtensionProfile) {
  GpuMigSpec spec = MigGpu("a100-80gb-sxm");
  for (GiProfile& p : spec.profiles) {
    if (p.media_extension) p.max_instances = 7;
  }
  auto layout = ParseLayout("1g.10gb+me@0,1g.10gb+me@1");
  ASSERT_TRUE(layout);
  auto status = ValidateLayout(spec, *layout);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().message(),
            "'1g.10gb+me@1': only one \"+me\" instance per GPU, and '1g.10gb+me@0' already holds "
            "the media engines");
}

TEST(LayoutTest, ProfileNamesAreCaseInsensitive) {
  EXPECT_EQ(Reason("a100-80gb-sxm", "3G.40GB@0"), "");
}

TEST(LayoutTest, UniformLayoutsTakeTheEarliestNonOverlappingSlots) {
  const GpuMigSpec& a100 = MigGpu("a100-80gb-sxm");
  auto halves = UniformLayout(a100, "3g", 2);
  ASSERT_TRUE(halves);
  EXPECT_EQ(FormatLayout(*halves), "3g.40gb@0,3g.40gb@4");
  auto thirds = UniformLayout(a100, "2g", 3);
  ASSERT_TRUE(thirds);
  EXPECT_EQ(FormatLayout(*thirds), "2g.20gb@0,2g.20gb@2,2g.20gb@4");
  auto sevens = UniformLayout(a100, "1g", 7);
  ASSERT_TRUE(sevens);
  EXPECT_TRUE(ValidateLayout(a100, *sevens));
  EXPECT_FALSE(UniformLayout(a100, "4g", 2));
  EXPECT_FALSE(UniformLayout(a100, "1g", 8));
  EXPECT_FALSE(UniformLayout(a100, "5g", 1));
}

}  // namespace
}  // namespace headroom::mig
