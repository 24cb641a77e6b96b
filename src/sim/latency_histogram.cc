#include "sim/latency_histogram.h"

#include <algorithm>
#include <cmath>

namespace headroom::sim {
namespace {

constexpr double kMinSeconds = 1e-5;
constexpr double kMaxSeconds = 1e4;
constexpr double kGrowth = 1.001;  // relative bucket width
const double kLogGrowth = std::log(kGrowth);
const int kBuckets = static_cast<int>(std::ceil(std::log(kMaxSeconds / kMinSeconds) / kLogGrowth));

}  // namespace

LatencyHistogram::LatencyHistogram() : buckets_(kBuckets + 1, 0) {}

int LatencyHistogram::BucketOf(double seconds) const {
  if (seconds <= kMinSeconds) return 0;
  const int b = static_cast<int>(std::log(seconds / kMinSeconds) / kLogGrowth) + 1;
  return std::min(b, kBuckets);
}

double LatencyHistogram::BucketValue(int bucket) const {
  if (bucket == 0) return kMinSeconds;
  // Bucket b holds (min g^(b-1), min g^b]; its geometric midpoint.
  return kMinSeconds * std::exp((bucket - 0.5) * kLogGrowth);
}

void LatencyHistogram::Add(double seconds) {
  ++buckets_[static_cast<std::size_t>(BucketOf(seconds))];
  ++count_;
  sum_ += seconds;
  max_ = std::max(max_, seconds);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (std::size_t i = 0; i < buckets_.size(); ++i) buckets_[i] += other.buckets_[i];
  count_ += other.count_;
  sum_ += other.sum_;
  max_ = std::max(max_, other.max_);
}

double LatencyHistogram::Quantile(double q) const {
  if (count_ == 0) return 0;
  const auto rank = static_cast<std::uint64_t>(
      std::max(1.0, std::ceil(std::clamp(q, 0.0, 1.0) * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (std::size_t b = 0; b < buckets_.size(); ++b) {
    seen += buckets_[b];
    if (seen >= rank) return std::min(BucketValue(static_cast<int>(b)), max_);
  }
  return max_;
}

double LatencyHistogram::FractionAbove(double seconds) const {
  if (count_ == 0) return 0;
  std::uint64_t above = 0;
  for (std::size_t b = static_cast<std::size_t>(BucketOf(seconds)) + 1; b < buckets_.size(); ++b) {
    above += buckets_[b];
  }
  return static_cast<double>(above) / static_cast<double>(count_);
}

}  // namespace headroom::sim
