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
// Buckets added beyond a new value when the span grows: at least 128 (+-12% of it), and as many
// as the span holds, so that a run's spread settles after a few growths.
constexpr int kSlack = 128;

}  // namespace

LatencyHistogram::LatencyHistogram() = default;

[[gnu::noinline]] void LatencyHistogram::Cover(int lo, int hi) {
  const int last = first_ + static_cast<int>(buckets_.size()) - 1;
  if (!buckets_.empty() && lo >= first_ && hi <= last) return;
  const int slack = std::max(kSlack, static_cast<int>(buckets_.size()));
  const int new_first = std::max(0, buckets_.empty() ? lo - slack : std::min(first_, lo - slack));
  const int new_last =
      std::min(kBuckets, buckets_.empty() ? hi + slack : std::max(last, hi + slack));
  std::vector<std::uint64_t> grown(static_cast<std::size_t>(new_last - new_first + 1), 0);
  std::copy(buckets_.begin(), buckets_.end(), grown.begin() + (first_ - new_first));
  buckets_ = std::move(grown);
  first_ = new_first;
}

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
  const int b = BucketOf(seconds);
  // One unsigned comparison for both ends (below first_ wraps to a huge index).
  if (static_cast<std::size_t>(b - first_) >= buckets_.size()) [[unlikely]] {
    Cover(b, b);
  }
  ++buckets_[static_cast<std::size_t>(b - first_)];
  ++count_;
  sum_ += seconds;
  max_ = std::max(max_, seconds);
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  if (!other.buckets_.empty()) {
    Cover(other.first_, other.first_ + static_cast<int>(other.buckets_.size()) - 1);
    const auto offset = static_cast<std::size_t>(other.first_ - first_);
    for (std::size_t i = 0; i < other.buckets_.size(); ++i) {
      buckets_[offset + i] += other.buckets_[i];
    }
  }
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
    if (seen >= rank) return std::min(BucketValue(first_ + static_cast<int>(b)), max_);
  }
  return max_;
}

double LatencyHistogram::FractionAbove(double seconds) const {
  if (count_ == 0) return 0;
  std::uint64_t above = 0;
  for (int b = std::max(BucketOf(seconds) + 1, first_);
       b < first_ + static_cast<int>(buckets_.size()); ++b) {
    above += buckets_[static_cast<std::size_t>(b - first_)];
  }
  return static_cast<double>(above) / static_cast<double>(count_);
}

}  // namespace headroom::sim
