// The figures of a report page, each <figure class="plot" data-plot="NAME"> with its caption:
// a gnuplot plot rendered into the report's plot directory and inlined, or an SVG built by hand
// (report/mig_slots.h). Also the report's plot directory. Thread-compatible.
#ifndef HEADROOM_REPORT_FIGURE_H_
#define HEADROOM_REPORT_FIGURE_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "report/plot.h"

namespace headroom::report {

// Renders `p` into `plot_dir` (its .dat, .gp, .svg and .log stay there) and returns the figure
// with the SVG inlined; when it cannot be drawn (gnuplot missing, no data), the figure says so in
// its place and the reason is appended to `warnings`.
std::string PlotFigure(const CaptionedPlot& p, const std::string& plot_dir,
                       std::vector<std::string>& warnings);

// A figure around an <svg> element built by the caller. REQUIRES: `svg` is escaped markup.
std::string SvgFigure(std::string_view name, std::string_view svg, std::string_view caption);

// Creates DIR/plots (the plots' files) and returns its path.
[[nodiscard]] core::Result<std::string> MakePlotDir(const std::string& dir);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_FIGURE_H_
