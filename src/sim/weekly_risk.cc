#include "sim/weekly_risk.h"

#include <cmath>

#include <fmt/format.h>

#include "core/check.h"

namespace headroom::sim {
namespace {

// P(X <= k) for X ~ Binomial(n, p), summed in log space (n is a few thousand weeks at most).
double BinomialCdf(int k, int n, double p) {
  if (p <= 0) return 1;
  if (p >= 1) return k >= n ? 1 : 0;
  double sum = 0;
  for (int i = 0; i <= k; ++i) {
    const double log_term = std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) +
                            i * std::log(p) + (n - i) * std::log1p(-p);
    sum += std::exp(log_term);
  }
  return sum;
}

}  // namespace

// Hand-written rather than Boost.Math's binomial_distribution::find_upper_bound_on_p: one
// bisection on the CDF is all it takes, and Boost's headers are a 138 MB package to install on
// every CI machine for this one function. The CDF falls monotonically in p, so bisection
// converges to the bound; 200 halvings take the interval below any double's resolution.
double WeeklyRiskUpperBound(int events, int weeks, double confidence) {
  HEADROOM_CHECK(events >= 0 && events <= weeks && weeks > 0) << events << " of " << weeks;
  HEADROOM_CHECK(confidence > 0 && confidence < 1) << confidence;
  if (events == weeks) return 1;
  const double alpha = 1 - confidence;
  // Closed form without events: (1 - p)^n = alpha.
  if (events == 0) return -std::expm1(std::log(alpha) / weeks);
  double lo = 0, hi = 1;
  for (int i = 0; i < 200 && hi - lo > 0; ++i) {
    const double mid = (lo + hi) / 2;
    (BinomialCdf(events, weeks, mid) > alpha ? lo : hi) = mid;
  }
  return hi;
}

double WeeklyRiskLowerBound(int events, int weeks, double confidence) {
  HEADROOM_CHECK(events >= 0 && events <= weeks && weeks > 0) << events << " of " << weeks;
  HEADROOM_CHECK(confidence > 0 && confidence < 1) << confidence;
  if (events == 0) return 0;
  const double alpha = 1 - confidence;
  // Closed form when every week had one: p^n = alpha.
  if (events == weeks) return std::exp(std::log(alpha) / weeks);
  // P(X >= events) = 1 - P(X <= events - 1) rises with p.
  double lo = 0, hi = 1;
  for (int i = 0; i < 200 && hi - lo > 0; ++i) {
    const double mid = (lo + hi) / 2;
    (1 - BinomialCdf(events - 1, weeks, mid) < alpha ? lo : hi) = mid;
  }
  return lo;
}

int CleanWeeksNeeded(double max_risk, double confidence) {
  // (1 - max_risk)^n <= 1 - confidence, the smallest such n.
  const double n = std::log(1 - confidence) / std::log1p(-max_risk);
  int weeks = static_cast<int>(std::ceil(n - 1e-9));
  while (weeks > 1 && WeeklyRiskUpperBound(0, weeks - 1, confidence) <= max_risk) --weeks;
  while (WeeklyRiskUpperBound(0, weeks, confidence) > max_risk) ++weeks;
  return weeks;
}

core::Status ValidateRiskTarget(double max_risk, double confidence) {
  if (!(max_risk > 0 && max_risk < 1)) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "plan.max_weekly_risk {}: expected a chance between 0 and 1 (exclusive), e.g. 0.05",
        max_risk)));
  }
  if (!(confidence > 0.5 && confidence < 1)) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "plan.confidence {}: expected a confidence between 0.5 and 1 (exclusive), e.g. 0.95",
        confidence)));
  }
  return core::Ok();
}

}  // namespace headroom::sim
