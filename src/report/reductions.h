// The data reductions behind the reports' plots: an empirical CDF (latency distributions), the
// Pareto front of points to minimize on both axes (energy against latency), and a time series
// split by phase (prefill vs decode, or the phases a measured program marked). Pure functions;
// thread-compatible.
#ifndef HEADROOM_REPORT_REDUCTIONS_H_
#define HEADROOM_REPORT_REDUCTIONS_H_

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace headroom::report {

using Point = std::pair<double, double>;

// The empirical CDF of `values`: (v, fraction of values <= v) at each distinct value, in
// increasing order, the last at 1. More than `max_points` distinct values are thinned evenly by
// rank, keeping the first and the last. REQUIRES: max_points >= 2.
std::vector<Point> Cdf(std::vector<double> values, std::size_t max_points);

// The points no other point beats on both x and y (lower is better on both), in increasing x.
// Of points with equal x only the lowest y can be on the front.
std::vector<Point> ParetoFront(std::vector<Point> points);

// A stretch of time in one phase: [start_s, end_s).
struct PhaseSpan {
  std::string name;
  double start_s = 0;
  double end_s = 0;
};

// A series' points by the phase their time falls in, one series per phase name in order of
// first appearance; points in no span go to a phase named `outside` (left out when empty).
// Within a phase, each stretch after the first starts with a NaN point (a gap in the line);
// each stretch after a change of phase also starts with the last point of the phase before, so
// that the coloured stretches join up. REQUIRES: `points` in increasing time.
struct PhaseSeries {
  std::string name;
  std::vector<Point> points = {};
};
std::vector<PhaseSeries> SplitByPhase(const std::vector<Point>& points,
                                      const std::vector<PhaseSpan>& spans,
                                      const std::string& outside);

// The mean of y over the points whose x falls in each phase (same grouping as SplitByPhase,
// without the joins), with the count; phases without points are left out.
struct PhaseMean {
  std::string name;
  double mean = 0;
  std::size_t points = 0;
};
std::vector<PhaseMean> MeanByPhase(const std::vector<Point>& points,
                                   const std::vector<PhaseSpan>& spans, const std::string& outside);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_REDUCTIONS_H_
