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

// The histogram holds only the span of buckets its values reach, grown as they arrive: values
// first in the middle, then ever further out on both sides, and merges of spans that overlap or
// not, must count as one histogram over the whole range would.
TEST(LatencyHistogramTest, ASpanGrownBothWaysAndMergedCountsEveryValue) {
  LatencyHistogram grown, low, high, merged;
  std::vector<double> values;
  for (int i = 0; i < 2000; ++i) {
    // 1 s, then alternately below and above it, reaching 0.1 ms .. 2.6 h, and past both ends.
    const double v = i == 1999 ? 0.0 : i == 1998 ? 1e6 : std::pow(1.0092, i % 2 ? i / 2 : -i / 2);
    grown.Add(v);
    (v < 1 ? low : high).Add(v);
    values.push_back(v);
  }
  merged.Merge(high);  // into an empty one
  merged.Merge(low);   // a span wholly below it
  merged.Merge(LatencyHistogram());
  std::sort(values.begin(), values.end());
  for (const LatencyHistogram* h : {&grown, &merged}) {
    EXPECT_EQ(h->count(), values.size());
    for (double q : {0.001, 0.01, 0.25, 0.5, 0.75, 0.99, 0.999}) {
      const double exact =
          values[static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())) - 1)];
      EXPECT_NEAR(h->Quantile(q), exact, exact * 0.0006) << "q=" << q;
    }
    EXPECT_DOUBLE_EQ(h->max(), 1e6);
    // 1e6 s is past the range: it counts in the last bucket, above any time in range.
    EXPECT_DOUBLE_EQ(h->FractionAbove(9.9e3), 1.0 / static_cast<double>(values.size()));
    EXPECT_DOUBLE_EQ(h->FractionAbove(1e5), 0.0);
    EXPECT_NEAR(h->FractionAbove(1.0), 0.5, 0.001);
  }
}

}  // namespace
}  // namespace headroom::sim
