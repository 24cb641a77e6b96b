#include "report/mig_slots.h"

#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "report/mig_instances.h"
#include "report/testing/sample_mig.h"

namespace headroom::report {
namespace {

// The x and width attributes of every <rect class="gi"> in `svg`, in order.
std::vector<std::pair<double, double>> BlockRects(const std::string& svg) {
  std::vector<std::pair<double, double>> out;
  const std::string key = "<rect class=\"gi\" x=\"";
  for (std::size_t at = svg.find(key); at != std::string::npos; at = svg.find(key, at + 1)) {
    const double x = std::stod(svg.substr(at + key.size()));
    const std::size_t w = svg.find("width=\"", at);
    out.emplace_back(x, std::stod(svg.substr(w + 7)));
  }
  return out;
}

TEST(MigSlotsTest, BlocksSitAtTheirPlacementsOverTheirMemorySlices) {
  const MigGeometry g = testing::SampleGeometry();
  auto instances = InstancesOfText(g, "3g.71gb@0,2g.35gb@4,1g.18gb@6,1g.18gb@7");
  ASSERT_TRUE(instances) << instances.error().message();
  const SlotDiagram d = MigSlotDiagram(g, *instances, {}, "t", {});
  ASSERT_EQ(d.blocks.size(), 4u);
  ASSERT_EQ(d.memory_slices, 8);
  // Start slot and memory slices of each profile: 3g covers 4 memory slices, 2g two, 1g one.
  const std::vector<std::pair<int, int>> expected = {{0, 4}, {4, 2}, {6, 1}, {7, 1}};
  const std::string svg = SlotDiagramSvg(d);
  const auto rects = BlockRects(svg);
  ASSERT_EQ(rects.size(), 4u) << svg;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const SlotBox box = SlotBlockBox(d, d.blocks[i]);
    EXPECT_DOUBLE_EQ(box.x, kSlotRowLeft + kSlotCellWidth * expected[i].first) << i;
    EXPECT_DOUBLE_EQ(box.width, kSlotCellWidth * expected[i].second) << i;
    EXPECT_DOUBLE_EQ(rects[i].first, box.x) << i;
    EXPECT_DOUBLE_EQ(rects[i].second, box.width) << i;
  }
  // Side by side, they tile the whole row.
  EXPECT_DOUBLE_EQ(rects.back().first + rects.back().second, kSlotRowLeft + 8 * kSlotCellWidth);
  // Every cell is drawn, numbered 0..7.
  std::size_t cells = 0;
  for (std::size_t at = svg.find("class=\"cell\""); at != std::string::npos;
       at = svg.find("class=\"cell\"", at + 1)) {
    ++cells;
  }
  EXPECT_EQ(cells, 8u);
  EXPECT_EQ(ShortLayoutName(g, "3g.71gb@0,2g.35gb@4,1g.18gb@6,1g.18gb@7"), "3g + 2g + 1g x2");
  EXPECT_EQ(PlacedLayoutName(g, "3g.71gb@0,2g.35gb@4,1g.18gb@6,1g.18gb@7"), "3g@0,2g@4,1g@6,1g@7");
}

TEST(MigSlotsTest, MigOffIsOneBlockOverEverySlice) {
  const MigGeometry g = testing::SampleGeometry();
  auto instances = InstancesOfText(g, "MIG off");
  ASSERT_TRUE(instances);
  const SlotDiagram d = MigSlotDiagram(g, *instances, {{"1. a", "2. b"}}, "t", {});
  ASSERT_EQ(d.blocks.size(), 1u);
  EXPECT_EQ(d.blocks[0].label, "whole GPU (MIG off)");
  EXPECT_DOUBLE_EQ(SlotBlockBox(d, d.blocks[0]).width, 8 * kSlotCellWidth);
  EXPECT_EQ(d.blocks[0].lines, (std::vector<std::string>{"1. a", "2. b"}));
}

TEST(MigSlotsTest, MoreLinesMakeTallerBlocks) {
  SlotDiagram d{.memory_slices = 8, .blocks = {{.label = "a", .start = 0, .memory_slices = 8}}};
  const double empty = SlotBlockBox(d, d.blocks[0]).height;
  d.blocks[0].lines = std::vector<std::string>(10, "job");
  EXPECT_GT(SlotBlockBox(d, d.blocks[0]).height, empty);
}

TEST(MigSlotsTest, EveryTextIsEscaped) {
  const SlotDiagram d{.title = "plan <b>",
                      .memory_slices = 8,
                      .blocks = {{.label = "<script>x</script>",
                                  .detail = "a & b",
                                  .start = 0,
                                  .memory_slices = 8,
                                  .lines = {"1. \"quoted\" 'job'"}}},
                      .side = {"side <i>"}};
  const std::string svg = SlotDiagramSvg(d);
  EXPECT_EQ(svg.find("<script>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("<b>"), std::string::npos) << svg;
  EXPECT_EQ(svg.find("<i>"), std::string::npos) << svg;
  EXPECT_NE(svg.find("&lt;script&gt;x&lt;/script&gt;"), std::string::npos) << svg;
  EXPECT_NE(svg.find("a &amp; b"), std::string::npos) << svg;
  EXPECT_NE(svg.find("1. &quot;quoted&quot; &#39;job&#39;"), std::string::npos) << svg;
  EXPECT_NE(svg.find("<title>plan &lt;b&gt;</title>"), std::string::npos) << svg;
  EXPECT_EQ(svg.rfind("<svg role=\"img\"", 0), 0u);
  EXPECT_EQ(svg.substr(svg.size() - 6), "</svg>");
}

TEST(MigSlotsTest, LayoutsThatCannotBeDrawnAreErrors) {
  const MigGeometry g = testing::SampleGeometry();
  auto unknown = InstancesOfText(g, "5g.90gb@0");
  ASSERT_FALSE(unknown);
  EXPECT_NE(unknown.error().message().find("5g.90gb"), std::string::npos);
  EXPECT_FALSE(InstancesOfText(g, "3g.71gb@"));
  EXPECT_EQ(ShortLayoutName(g, "not a layout"), "not a layout");
}

}  // namespace
}  // namespace headroom::report
