#include "format/html.h"

#include <filesystem>

#include <fmt/format.h>

#include "core/files.h"

namespace headroom::format {
namespace {

// Readable on screen and on paper: one column, system fonts, tables with aligned numbers.
constexpr std::string_view kCss = R"css(
:root { color-scheme: light; }
body { margin: 0; background: #f6f7f9; color: #1b1f24;
       font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 32px 48px; background: #fff; }
h1 { font-size: 1.7em; margin: 0.2em 0 0.3em; }
h2 { font-size: 1.2em; margin: 1.8em 0 0.5em; border-bottom: 1px solid #d8dde3; }
.question { color: #4a5560; font-size: 1.05em; margin: 0; }
.answer { color: #0b5394; overflow-wrap: anywhere; }
.meta, figcaption, .note { color: #4a5560; font-size: 0.92em; }
table { border-collapse: collapse; margin: 0.5em 0; }
th, td { padding: 4px 10px; border-bottom: 1px solid #e3e7eb; text-align: right; }
th { background: #eef1f4; }
td:first-child, th:first-child, table.inputs td { text-align: left; }
table.inputs th { text-align: left; background: none; font-weight: 600; }
tr.chosen td { background: #e8f1fb; font-weight: 600; }
figure { margin: 1.2em 0; }
figure svg { width: 100%; height: auto; border: 1px solid #e3e7eb; }
figure svg svg { width: auto; border: none; }
ul.why li { margin: 0.2em 0; }
details { margin: 0.4em 0; }
summary { cursor: pointer; font-weight: 600; }
tr.gpu td { font-weight: 600; background: #f6f7f9; }
.missing { color: #a61b1b; }
code { font-size: 0.95em; }
)css";

// Inserts `prefix` after every occurrence of `marker` in `text`.
void PrefixAfter(std::string& text, std::string_view marker, std::string_view prefix) {
  for (std::size_t at = text.find(marker); at != std::string::npos;
       at = text.find(marker, at + marker.size() + prefix.size())) {
    text.insert(at + marker.size(), prefix);
  }
}

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string HtmlPage(std::string_view title, std::string_view body_html) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<title>{}</title>\n<style>{}</style>\n</head>\n<body>\n<main>\n{}</main>\n</body>\n"
      "</html>\n",
      HtmlEscape(title), kCss, body_html);
}

core::Result<std::string> InlineSvg(std::string_view svg, std::string_view title,
                                    std::string_view id_prefix) {
  const std::size_t start = svg.find("<svg");
  const std::size_t end = svg.rfind("</svg>");
  if (start == std::string_view::npos || end == std::string_view::npos || end < start) {
    return core::Fail(core::Error::InvalidArgument("not an SVG document (no <svg> element)"));
  }
  std::string out(svg.substr(start, end + 6 - start));
  const std::string prefix = std::string(id_prefix) + "-";
  for (std::string_view marker : {"id='", "id=\"", "href='#", "href=\"#", "url(#"}) {
    PrefixAfter(out, marker, prefix);
  }
  const std::size_t t0 = out.find("<title>");
  const std::size_t t1 = out.find("</title>");
  if (t0 != std::string::npos && t1 != std::string::npos && t1 > t0) {
    out.replace(t0 + 7, t1 - t0 - 7, HtmlEscape(title));
  }
  // Screen readers announce the plot by its title.
  out.insert(4, " role=\"img\"");
  return out;
}

std::string HtmlRow(const std::vector<std::string>& cells, const char* tag, const char* css_class) {
  std::string out = css_class != nullptr ? fmt::format("<tr class=\"{}\">", css_class) : "<tr>";
  for (const std::string& c : cells) out += fmt::format("<{0}>{1}</{0}>", tag, HtmlEscape(c));
  return out + "</tr>\n";
}

std::string HtmlInputs(const std::vector<std::pair<std::string, std::string>>& rows) {
  std::string out = "<section id=\"inputs\">\n<h2>Inputs</h2>\n<table class=\"inputs\">\n";
  for (const auto& [key, value] : rows) {
    out += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", HtmlEscape(key), HtmlEscape(value));
  }
  return out + "</table>\n</section>\n";
}

namespace {

std::string HtmlFigure(const CaptionedPlot& p, const std::string& plot_dir,
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

}  // namespace

std::string HtmlHeader(std::string_view question, std::string_view answer,
                       std::string_view meta_html) {
  return fmt::format(
      "<header>\n<p class=\"question\">{}</p>\n<h1 class=\"answer\">{}</h1>\n"
      "<p class=\"meta\">{}</p>\n</header>\n",
      HtmlEscape(question), HtmlEscape(answer), meta_html);
}

std::string HtmlPlots(const std::vector<CaptionedPlot>& plots, const std::string& plot_dir,
                      std::vector<std::string>& warnings) {
  std::string out = "<section id=\"plots\">\n<h2>Plots</h2>\n";
  for (const CaptionedPlot& p : plots) out += HtmlFigure(p, plot_dir, warnings);
  return out + "</section>\n";
}

std::string HtmlFooter(std::string_view version, std::string_view writer) {
  return fmt::format(
      "<footer class=\"meta\">headroom {} &middot; rebuild with <code>headroom report "
      "DIR</code> from the directory <code>{}</code> wrote.</footer>\n",
      HtmlEscape(version), HtmlEscape(writer));
}

std::string SvgFigure(std::string_view name, std::string_view svg, std::string_view caption) {
  return fmt::format(
      "<figure class=\"plot\" data-plot=\"{}\">\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
      HtmlEscape(name), svg, HtmlEscape(caption));
}

core::Result<WrittenReport> WriteReportPage(
    const std::string& dir, const std::function<HtmlReport(const std::string& plot_dir)>& build) {
  const std::string plot_dir = dir + "/plots";
  std::error_code ec;
  std::filesystem::create_directories(plot_dir, ec);
  if (ec) {
    return core::Fail(core::Error::Unavailable(
        fmt::format("{}: cannot create the directory: {}", plot_dir, ec.message())));
  }
  HtmlReport html = build(plot_dir);
  WrittenReport written{.path = fmt::format("{}/{}", dir, kReportFile),
                        .warnings = std::move(html.warnings)};
  HEADROOM_RETURN_IF_ERROR(core::WriteFileAtomically(written.path, html.html));
  return written;
}

}  // namespace headroom::format
