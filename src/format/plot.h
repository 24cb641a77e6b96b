// Plots as SVG files through gnuplot (Debian gnuplot-nox): each plot's data and script are
// written beside the SVG, so a reader can re-render or restyle it. Thread-compatible.
#ifndef HEADROOM_FORMAT_PLOT_H_
#define HEADROOM_FORMAT_PLOT_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace headroom::format {

enum class Style { kLinesPoints, kLines, kPoints, kBoxes };

// A series with no points is left out of the plot (gnuplot cannot plot an empty block). A point
// whose y is NaN breaks the line there (e.g. between two stretches of one phase).
struct Series {
  std::string label;
  std::vector<std::pair<double, double>> points = {};
  Style style = Style::kLinesPoints;
  bool dashed = false;
  double line_width = 2;    // gnuplot lw; a timeline's bars are thick lines
  double point_size = 1.2;  // gnuplot ps, for kPoints and kLinesPoints
  // Per point, the (low, high) of an interval around y, drawn as error bars on the line; empty:
  // none. REQUIRES: empty or as long as points.
  std::vector<std::pair<double, double>> y_ranges = {};
};

struct Plot {
  std::string name;  // file stem: <dir>/<name>.svg, .dat, .gp
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<Series> series = {};
  // Categorical x axis: a label at each position (e.g. one bar per policy); empty: numeric.
  std::vector<std::pair<double, std::string>> x_tics = {};
  std::optional<double> y_min = {};  // lower end of the y axis; empty: gnuplot's choice
  std::optional<double> x_min = {};  // lower end of the x axis; empty: gnuplot's choice
  double box_width = 0.6;            // Style::kBoxes, in x units (narrower for grouped bars)
  bool log_x = false;                // a logarithmic x axis (e.g. latency spanning decades)
  // Categorical y axis, drawn top to bottom in the order given (e.g. one row per MIG instance).
  std::vector<std::pair<double, std::string>> y_tics = {};
  bool rotate_x_tics = false;  // long category names: slanted so that neighbours never overlap
  bool pad_x = false;          // room left and right of the data (a scatter of few points)
};

// A plot and the words under it in a report.
struct CaptionedPlot {
  Plot plot;
  std::string caption;  // plain text: what the plot shows and how to read it
};

// Writes <dir>/<name>.dat and .gp and renders <dir>/<name>.svg. kUnavailable (naming the package
// to install) when gnuplot is missing; the data and script are written regardless.
[[nodiscard]] core::Status RenderPlot(const std::string& dir, const Plot& plot);

}  // namespace headroom::format

#endif  // HEADROOM_FORMAT_PLOT_H_
