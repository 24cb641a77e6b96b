// Plots as SVG files through gnuplot (Debian gnuplot-nox): each plot's data and script are
// written beside the SVG, so a reader can re-render or restyle it. Thread-compatible.
#ifndef HEADROOM_REPORT_PLOT_H_
#define HEADROOM_REPORT_PLOT_H_

#include <string>
#include <utility>
#include <vector>

#include "core/result.h"

namespace headroom::report {

struct Series {
  std::string label;
  std::vector<std::pair<double, double>> points = {};
  bool lines = true;  // false: points only
};

struct Plot {
  std::string name;  // file stem: <dir>/<name>.svg, .dat, .gp
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<Series> series = {};
};

// Writes <dir>/<name>.dat and .gp and renders <dir>/<name>.svg. kUnavailable (naming the package
// to install) when gnuplot is missing; the data and script are written regardless.
[[nodiscard]] core::Status RenderPlot(const std::string& dir, const Plot& plot);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_PLOT_H_
