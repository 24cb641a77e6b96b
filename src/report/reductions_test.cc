#include "report/reductions.h"

#include <cmath>

#include <gtest/gtest.h>

namespace headroom::report {
namespace {

TEST(CdfTest, StepsAtEachDistinctValue) {
  // Sorted: 1 2 2 3; at or below 1: 1/4, 2: 3/4, 3: 4/4.
  EXPECT_EQ(Cdf({3, 1, 2, 2}, 10), (std::vector<Point>{{1, 0.25}, {2, 0.75}, {3, 1.0}}));
  EXPECT_TRUE(Cdf({}, 10).empty());
}

TEST(CdfTest, ThinsByRankKeepingBothEnds) {
  // Ten distinct values 1..10 (fractions 0.1..1.0), four points: ranks 0, 3, 6, 9.
  std::vector<double> values;
  for (int v = 10; v >= 1; --v) values.push_back(v);
  const std::vector<Point> cdf = Cdf(values, 4);
  ASSERT_EQ(cdf.size(), 4u);
  EXPECT_EQ(cdf[0], Point(1, 0.1));
  EXPECT_EQ(cdf[1], Point(4, 0.4));
  EXPECT_EQ(cdf[2], Point(7, 0.7));
  EXPECT_EQ(cdf[3], Point(10, 1.0));
}

TEST(ParetoFrontTest, KeepsThePointsNothingBeatsOnBothAxes) {
  // (3,4) loses to (2,3); (2,6) to (2,3); (5,1) to (4,1).
  EXPECT_EQ(ParetoFront({{1, 5}, {2, 3}, {3, 4}, {4, 1}, {2, 6}, {5, 1}}),
            (std::vector<Point>{{1, 5}, {2, 3}, {4, 1}}));
  EXPECT_EQ(ParetoFront({{2, 2}}), (std::vector<Point>{{2, 2}}));
  EXPECT_TRUE(ParetoFront({}).empty());
}

// Prints NaN as "gap" so that expectations can be compared as text.
std::string Text(const std::vector<Point>& points) {
  std::string out;
  for (const auto& [x, y] : points) {
    out += std::isnan(y) ? "gap@" + std::to_string(static_cast<int>(x)) + " "
                         : std::to_string(static_cast<int>(x)) + ":" +
                               std::to_string(static_cast<int>(y)) + " ";
  }
  return out;
}

TEST(SplitByPhaseTest, ColoursStretchesThatJoinUpAndGapsBetweenRepeats) {
  // t:   0   1   2   3   4   5   6
  // in:  -   p   p   d   d   p   -     (p [1,3), d [3,5), p [5,6))
  const std::vector<Point> points = {{0, 10}, {1, 11}, {2, 12}, {3, 13}, {4, 14}, {5, 15}, {6, 16}};
  const std::vector<PhaseSpan> spans = {{"prefill", 1, 3}, {"decode", 3, 5}, {"prefill", 5, 6}};
  const std::vector<PhaseSeries> split = SplitByPhase(points, spans, "none");
  ASSERT_EQ(split.size(), 3u);
  EXPECT_EQ(split[0].name, "none");
  EXPECT_EQ(Text(split[0].points), "0:10 gap@6 5:15 6:16 ");
  EXPECT_EQ(split[1].name, "prefill");
  EXPECT_EQ(Text(split[1].points), "0:10 1:11 2:12 gap@5 4:14 5:15 ");
  EXPECT_EQ(split[2].name, "decode");
  EXPECT_EQ(Text(split[2].points), "2:12 3:13 4:14 ");
}

TEST(MeanByPhaseTest, AveragesEachPhaseOverItsPoints) {
  const std::vector<Point> points = {{0, 10}, {1, 11}, {2, 12}, {3, 13}, {4, 14}, {5, 15}};
  const std::vector<PhaseMean> means =
      MeanByPhase(points, {{"prefill", 1, 3}, {"decode", 3, 5}, {"prefill", 5, 6}}, "none");
  ASSERT_EQ(means.size(), 3u);
  EXPECT_EQ(means[0].name, "none");
  EXPECT_DOUBLE_EQ(means[0].mean, 10);
  EXPECT_EQ(means[1].name, "prefill");  // 11, 12, 15
  EXPECT_DOUBLE_EQ(means[1].mean, 38.0 / 3);
  EXPECT_EQ(means[1].points, 3u);
  EXPECT_EQ(means[2].name, "decode");  // 13, 14
  EXPECT_DOUBLE_EQ(means[2].mean, 13.5);
}

}  // namespace
}  // namespace headroom::report
