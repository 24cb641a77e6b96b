#include "format/plot.h"

#include <cmath>

#include <fmt/format.h>

#include "core/files.h"
#include "core/subprocess.h"

namespace headroom::format {
namespace {

// gnuplot strings are single-quoted; a quote inside is doubled.
std::string Quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("''") : std::string(1, c);
  return out + "'";
}

std::string With(const Series& s) {
  switch (s.style) {
    case Style::kLines:
      return "lines";
    case Style::kPoints:
      return fmt::format("points pt 7 ps {}", s.point_size);
    case Style::kBoxes:
      return "boxes";
    case Style::kLinesPoints:
      break;
  }
  return s.point_size == 1.2 ? "linespoints" : fmt::format("linespoints ps {}", s.point_size);
}

// A name drawn as it is under the enhanced terminal, which reads _ ^ @ & { } ~ as markup
// ("lp_p50" would come out with a subscript): each escaped with a backslash.
std::string Literal(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::string_view("_^@&{}~").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string Tics(const std::vector<std::pair<double, std::string>>& tics) {
  std::string out;
  for (const auto& [at, label] : tics) {
    out += fmt::format("{}{} {}", out.empty() ? "" : ", ", Quote(Literal(label)), at);
  }
  return out;
}

// The axis settings beyond labels: categorical tics, the y range, filled boxes.
std::string AxisSettings(const Plot& plot) {
  std::string out;
  if (!plot.x_tics.empty()) {
    out += fmt::format("set xtics ({}){}\nset xrange [{}:{}]\n", Tics(plot.x_tics),
                       plot.rotate_x_tics ? " rotate by -30 left" : "",
                       plot.x_tics.front().first - 0.6, plot.x_tics.back().first + 0.6);
  } else if (plot.x_min) {
    out += fmt::format("set xrange [{}:*]\n", *plot.x_min);
  }
  if (!plot.y_tics.empty()) {
    // Reversed, so that the first category is the top row.
    out += fmt::format("set ytics ({})\nset yrange [{}:{}]\nunset mytics\n", Tics(plot.y_tics),
                       plot.y_tics.back().first + 0.6, plot.y_tics.front().first - 0.6);
  } else if (plot.y_min) {
    out += fmt::format("set yrange [{}:*]\n", *plot.y_min);
  }
  if (plot.log_x) out += "set logscale x\n";
  // Room above the highest point or reference line, so that neither sits on the frame.
  out += fmt::format("set offsets {0}, {0}, graph 0.08, 0\n", plot.pad_x ? "graph 0.06" : "0");
  out += fmt::format("set style fill solid 0.6 border -1\nset boxwidth {}\n", plot.box_width);
  return out;
}

}  // namespace

core::Status RenderPlot(const std::string& dir, const Plot& plot) {
  const std::string stem = dir + "/" + plot.name;
  std::string data;
  std::string plots;
  int block = 0;
  for (const Series& s : plot.series) {
    if (s.points.empty()) continue;
    data += fmt::format("# {}\n", s.label);
    const bool ranges = !s.y_ranges.empty();
    for (std::size_t i = 0; i < s.points.size(); ++i) {
      const auto [x, y] = s.points[i];
      // One blank line inside a block lifts the pen; two would start a new block.
      if (std::isnan(y)) {
        data += "\n";
      } else if (ranges) {
        data += fmt::format("{} {} {} {}\n", x, y, s.y_ranges[i].first, s.y_ranges[i].second);
      } else {
        data += fmt::format("{} {}\n", x, y);
      }
    }
    data += "\n\n";  // gnuplot data blocks are separated by two blank lines
    plots += fmt::format("{}{} index {} using {} with {} lw {}{} title {}", block == 0 ? "" : ", ",
                         Quote(stem + ".dat"), block, ranges ? "1:2:3:4" : "1:2",
                         ranges ? "yerrorlines" : With(s), s.line_width, s.dashed ? " dt 2" : "",
                         Quote(s.label));
    ++block;
  }
  if (block == 0) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{}.svg not drawn: plot '{}' has no data", stem, plot.title)));
  }
  HEADROOM_RETURN_IF_ERROR(core::WriteFileAtomically(stem + ".dat", data));
  const std::string script = fmt::format(
      "set terminal svg size 800,480 dynamic enhanced font 'sans,12' background '#ffffff'\n"
      "set output {}\nset title {}\nset xlabel {}\nset ylabel {}\nset grid\n"
      "set key outside right top\n{}plot {}\n",
      Quote(stem + ".svg"), Quote(plot.title), Quote(plot.x_label), Quote(plot.y_label),
      AxisSettings(plot), plots);
  HEADROOM_RETURN_IF_ERROR(core::WriteFileAtomically(stem + ".gp", script));

  const std::string gp_path = stem + ".gp";
  // gnuplot's own messages (e.g. "empty x range" for a one-point plot) go to <stem>.log, not
  // into the command's output.
  const std::string log_path = stem + ".log";
  auto gnuplot = core::Subprocess::Start(
      {"gnuplot", gp_path}, {.output = core::SpawnOptions::Output::kFile, .output_file = log_path});
  if (!gnuplot) {
    return core::Fail(core::Error::Unavailable(fmt::format(
        "{}.svg not drawn: {}; install Debian's gnuplot-nox", stem, gnuplot.error().message())));
  }
  if (gnuplot->Wait() != 0) {
    return core::Fail(
        core::Error::Internal(fmt::format("gnuplot failed on {} (see {})", gp_path, log_path)));
  }
  return core::Ok();
}

}  // namespace headroom::format
