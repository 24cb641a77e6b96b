#include "report/reductions.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace headroom::report {
namespace {

// The phase in effect at `t`: the first span holding it, or `outside`.
const std::string& PhaseAt(double t, const std::vector<PhaseSpan>& spans,
                           const std::string& outside) {
  for (const PhaseSpan& s : spans) {
    if (s.start_s <= t && t < s.end_s) return s.name;
  }
  return outside;
}

// The index of `name` in `out`, appended when new.
template <typename T>
std::size_t IndexOf(std::vector<T>& out, const std::string& name) {
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (out[i].name == name) return i;
  }
  out.push_back(T{.name = name});
  return out.size() - 1;
}

}  // namespace

std::vector<Point> Cdf(std::vector<double> values, std::size_t max_points) {
  std::sort(values.begin(), values.end());
  std::vector<Point> steps;
  const double n = static_cast<double>(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    // Only the last of equal values: the fraction at or below it.
    if (i + 1 < values.size() && values[i + 1] == values[i]) continue;
    steps.emplace_back(values[i], static_cast<double>(i + 1) / n);
  }
  if (steps.size() <= max_points) return steps;
  std::vector<Point> thinned;
  const std::size_t last = steps.size() - 1;
  for (std::size_t k = 0; k < max_points; ++k) {
    thinned.push_back(steps[k * last / (max_points - 1)]);
  }
  return thinned;
}

std::vector<Point> ParetoFront(std::vector<Point> points) {
  std::sort(points.begin(), points.end());
  std::vector<Point> front;
  double best = std::numeric_limits<double>::infinity();
  for (const Point& p : points) {
    if (p.second < best) {
      front.push_back(p);
      best = p.second;
    }
  }
  return front;
}

std::vector<PhaseSeries> SplitByPhase(const std::vector<Point>& points,
                                      const std::vector<PhaseSpan>& spans,
                                      const std::string& outside) {
  std::vector<PhaseSeries> out;
  const std::string* previous = nullptr;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string& phase = PhaseAt(points[i].first, spans, outside);
    PhaseSeries& s = out[IndexOf(out, phase)];
    if (previous != nullptr && *previous != phase) {
      if (!s.points.empty()) s.points.emplace_back(points[i].first, std::nan(""));
      s.points.push_back(points[i - 1]);
    }
    s.points.push_back(points[i]);
    previous = &phase;
  }
  return out;
}

std::vector<PhaseMean> MeanByPhase(const std::vector<Point>& points,
                                   const std::vector<PhaseSpan>& spans,
                                   const std::string& outside) {
  std::vector<PhaseMean> out;
  for (const Point& p : points) {
    PhaseMean& m = out[IndexOf(out, PhaseAt(p.first, spans, outside))];
    m.mean += p.second;
    ++m.points;
  }
  for (PhaseMean& m : out) m.mean /= static_cast<double>(m.points);
  return out;
}

}  // namespace headroom::report
