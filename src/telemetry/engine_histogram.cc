#include "telemetry/engine_histogram.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace headroom::telemetry {

core::Result<std::optional<double>> WindowQuantile(const LatencyHistogramSample& before,
                                                   const LatencyHistogramSample& after, double q) {
  const auto& b = before.buckets;
  const auto& a = after.buckets;
  if (a.size() != b.size()) {
    return core::Fail(core::Error::InvalidArgument("the histogram's buckets changed"));
  }
  for (size_t k = 0; k < a.size(); ++k) {
    if (a[k].first != b[k].first) {
      return core::Fail(core::Error::InvalidArgument("the histogram's buckets changed"));
    }
    if (a[k].second < b[k].second) {
      return core::Fail(
          core::Error::InvalidArgument("a histogram count went down (the engine restarted)"));
    }
  }
  const double total = after.count() - before.count();
  if (a.empty() || total <= 0) return std::nullopt;
  const double rank = q * total;
  double lower_bound = 0;
  double below = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    const double upto = a[k].second - b[k].second;
    if (upto >= rank) {
      if (std::isinf(a[k].first)) return k > 0 ? a[k - 1].first : 0.0;
      const double in_bucket = upto - below;
      const double share = in_bucket > 0 ? (rank - below) / in_bucket : 1;
      return lower_bound + (a[k].first - lower_bound) * share;
    }
    lower_bound = a[k].first;
    below = upto;
  }
  return a.size() > 1 ? a[a.size() - 2].first : 0.0;
}

BucketCounter::BucketCounter(std::span<const double> bounds)
    : bounds_(bounds.begin(), bounds.end()), cumulative_(bounds.size() + 1, 0.0) {}

void BucketCounter::Add(double seconds, double count) { AddRun(seconds, 0, 1, count); }

void BucketCounter::AddRun(double first, double growth, std::int64_t n, double weight) {
  if (n <= 0 || weight <= 0) return;
  const auto all = static_cast<double>(n);
  for (size_t j = 0; j < bounds_.size(); ++j) {
    // How many of first + k * growth (k < n) are at most the bound: a count, not a loop over the
    // run's steps (a week's runs hold tens of millions).
    double at_most = 0;
    if (growth <= 0) {
      at_most = first <= bounds_[j] ? all : 0;
    } else if (first <= bounds_[j]) {
      at_most = std::min(all, std::floor((bounds_[j] - first) / growth) + 1);
    }
    cumulative_[j] += weight * at_most;
  }
  cumulative_.back() += weight * all;
}

LatencyHistogramSample BucketCounter::Sample() const {
  LatencyHistogramSample s;
  s.buckets.reserve(cumulative_.size());
  for (size_t j = 0; j < bounds_.size(); ++j) s.buckets.emplace_back(bounds_[j], cumulative_[j]);
  s.buckets.emplace_back(std::numeric_limits<double>::infinity(), cumulative_.back());
  return s;
}

EngineLatencyReader::Reading EngineLatencyReader::Add(const LatencyHistogramSample& itl,
                                                      const LatencyHistogramSample& ttft,
                                                      core::Duration at) {
  Reading r;
  while (!ttft_.empty() && ttft_.front().first < at - ttft_span_) ttft_.pop_front();
  if (!last_itl_ || ttft_.empty()) {
    r.first = true;
  } else {
    auto itl_q = WindowQuantile(*last_itl_, itl, 0.5);
    auto ttft_q = WindowQuantile(ttft_.front().second, ttft, 0.99);
    if (!itl_q || !ttft_q) {
      r.invalid = (itl_q ? ttft_q : itl_q).error().message();
      ttft_.clear();
    } else {
      r.itl_p50_s = *itl_q;
      r.ttft_p99_s = *ttft_q;
    }
  }
  last_itl_ = itl;
  ttft_.emplace_back(at, ttft);
  return r;
}

void EngineLatencyReader::Reset() {
  last_itl_.reset();
  ttft_.clear();
}

}  // namespace headroom::telemetry
