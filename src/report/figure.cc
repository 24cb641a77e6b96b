#include "report/figure.h"

#include <filesystem>

#include <fmt/format.h>

#include "core/files.h"
#include "report/html.h"

namespace headroom::report {

std::string PlotFigure(const CaptionedPlot& p, const std::string& plot_dir,
                       std::vector<std::string>& warnings) {
  core::Result<std::string> svg = [&]() -> core::Result<std::string> {
    HEADROOM_RETURN_IF_ERROR(RenderPlot(plot_dir, p.plot));
    HEADROOM_ASSIGN_OR_RETURN(std::string file,
                              core::ReadFile(fmt::format("{}/{}.svg", plot_dir, p.plot.name)));
    return InlineSvg(file, p.plot.title, p.plot.name);
  }();
  std::string body;
  if (svg) {
    body = *svg;
  } else {
    warnings.push_back(svg.error().message());
    body = fmt::format("<p class=\"missing\">Plot not drawn: {}</p>",
                       HtmlEscape(svg.error().message()));
  }
  return SvgFigure(p.plot.name, body, p.caption);
}

std::string SvgFigure(std::string_view name, std::string_view svg, std::string_view caption) {
  return fmt::format(
      "<figure class=\"plot\" data-plot=\"{}\">\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
      HtmlEscape(name), svg, HtmlEscape(caption));
}

core::Result<std::string> MakePlotDir(const std::string& dir) {
  const std::string plot_dir = dir + "/plots";
  std::error_code ec;
  std::filesystem::create_directories(plot_dir, ec);
  if (ec) {
    return core::Fail(core::Error::Unavailable(
        fmt::format("{}: cannot create the directory: {}", plot_dir, ec.message())));
  }
  return plot_dir;
}

}  // namespace headroom::report
