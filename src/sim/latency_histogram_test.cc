#include "sim/latency_histogram.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

namespace headroom::sim {
namespace {

TEST(LatencyHistogramTest, QuantilesWithinTheBucketPrecision) {
  LatencyHistogram h;
  std::vector<double> values;
  for (int i = 1; i <= 10000; ++i) {
    const double v = 0.001 * i * (1 + (i % 7) * 0.1);  // 1 ms .. ~16 s, uneven
    h.Add(v);
    values.push_back(v);
  }
  std::sort(values.begin(), values.end());
  const auto nearest_rank = [&](double q) {
    return values[static_cast<std::size_t>(std::max(1.0, std::ceil(q * values.size())) - 1)];
  };
  for (double q : {0.01, 0.5, 0.9, 0.99, 1.0}) {
    const double exact = nearest_rank(q);
    EXPECT_NEAR(h.Quantile(q), exact, exact * 0.0006) << "q=" << q;
  }
  EXPECT_EQ(h.count(), 10000u);
  EXPECT_NEAR(h.FractionAbove(nearest_rank(0.9)), 0.1, 0.002);
}

TEST(LatencyHistogramTest, EmptyAndMerge) {
  LatencyHistogram a, b;
  EXPECT_EQ(a.Quantile(0.5), 0);
  a.Add(1.0);
  b.Add(3.0);
  b.Add(5.0);
  a.Merge(b);
  EXPECT_EQ(a.count(), 3u);
  EXPECT_NEAR(a.Quantile(0.5), 3.0, 0.003);
  EXPECT_DOUBLE_EQ(a.max(), 5.0);
  EXPECT_DOUBLE_EQ(a.mean(), 3.0);
}

}  // namespace
}  // namespace headroom::sim
