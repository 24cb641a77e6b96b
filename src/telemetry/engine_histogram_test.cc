#include "telemetry/engine_histogram.h"

#include <gtest/gtest.h>

namespace headroom::telemetry {
namespace {

TEST(BucketCounterTest, ARunCountsAsItsStepsOneByOne) {
  BucketCounter run(kVllmItlBucketsS);
  BucketCounter steps(kVllmItlBucketsS);
  run.AddRun(0.020, 0.0001, 400, 3);  // 20 ms to 59.9 ms, three sequences a step
  for (int k = 0; k < 400; ++k) steps.Add(0.020 + 0.0001 * k, 3);
  const LatencyHistogramSample a = run.Sample();
  const LatencyHistogramSample b = steps.Sample();
  ASSERT_EQ(a.buckets.size(), kVllmItlBucketsS.size() + 1);
  for (size_t j = 0; j < a.buckets.size(); ++j) {
    EXPECT_NEAR(a.buckets[j].second, b.buckets[j].second, 3.0) << "bucket " << a.buckets[j].first;
  }
  EXPECT_DOUBLE_EQ(a.count(), 1200);
}

TEST(BucketCounterTest, TheWindowQuantileInterpolatesWithinTheEnginesBucket) {
  BucketCounter itl(kVllmItlBucketsS);
  const LatencyHistogramSample before = itl.Sample();
  itl.Add(0.030, 10);  // all in (0.025, 0.05]
  auto p50 = WindowQuantile(before, itl.Sample(), 0.5);
  ASSERT_TRUE(p50.has_value());
  // The engine's page cannot tell 30 ms from 45 ms: half way through the bucket.
  EXPECT_DOUBLE_EQ(**p50, 0.0375);
  // Nothing observed between two samples: no quantile.
  EXPECT_FALSE(WindowQuantile(itl.Sample(), itl.Sample(), 0.5)->has_value());
  BucketCounter other(kVllmTtftBucketsS);
  EXPECT_FALSE(WindowQuantile(before, other.Sample(), 0.5).has_value());
}

}  // namespace
}  // namespace headroom::telemetry
