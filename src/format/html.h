// Pieces of self-contained HTML reports, shared by every report (plan, simulate, characterize,
// measure): text escaping, the page around a body (inline CSS, no external resource of any
// kind), an SVG file rendered by gnuplot made fit to inline, table rows, the inputs table, a
// plot's <figure>, and writing DIR/report.html with its plots under DIR/plots/.
// HtmlPlots and WriteReportPage run gnuplot and touch files; the rest are pure.
// Thread-compatible.
#ifndef HEADROOM_FORMAT_HTML_H_
#define HEADROOM_FORMAT_HTML_H_

#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/result.h"
#include "format/plot.h"

namespace headroom::format {

// Escapes & < > " ' so that `text` reads as itself in element content and attribute values.
std::string HtmlEscape(std::string_view text);

// A whole HTML5 document: UTF-8, the title, the house CSS, and `body_html` inside <main>.
std::string HtmlPage(std::string_view title, std::string_view body_html);

// The <svg> element of an SVG document, ready to sit inside HTML: the XML prolog dropped, the
// title set to `title`, and every id (and each reference to one) prefixed with `id_prefix` so
// that several plots on one page never share an id. kInvalidArgument when `svg` holds no <svg>.
[[nodiscard]] core::Result<std::string> InlineSvg(std::string_view svg, std::string_view title,
                                                  std::string_view id_prefix);

inline constexpr const char* kReportFile = "report.html";

// <tr> of escaped cells; `tag` "th" for a header row; `css_class` set on the row when not null.
std::string HtmlRow(const std::vector<std::string>& cells, const char* tag = "td",
                    const char* css_class = nullptr);

// <section id="inputs"> with a two-column table of (name, value), both escaped.
std::string HtmlInputs(const std::vector<std::pair<std::string, std::string>>& rows);

// The page's opening: the question, the answer (both escaped) and a line of context `meta_html`
// (markup, escaped by the caller).
std::string HtmlHeader(std::string_view question, std::string_view answer,
                       std::string_view meta_html);

// <section id="plots"> with each plot's <figure class="plot" data-plot="NAME">: the plot rendered
// by gnuplot into `plot_dir` and inlined, or a note saying why it was not drawn (the reason also
// appended to `warnings`).
std::string HtmlPlots(const std::vector<CaptionedPlot>& plots, const std::string& plot_dir,
                      std::vector<std::string>& warnings);

// The page's footer: headroom's version, and how to rebuild the page (`headroom report DIR` on
// the directory `writer`, e.g. "headroom plan --out DIR", wrote).
std::string HtmlFooter(std::string_view version, std::string_view writer);

// The same <figure> around an <svg> element built by the caller (report/mig_slots.h).
// REQUIRES: `svg` is markup whose text is already escaped.
std::string SvgFigure(std::string_view name, std::string_view svg, std::string_view caption);

struct HtmlReport {
  std::string html;
  // Plots that could not be drawn (e.g. gnuplot missing); the page says so in their place.
  std::vector<std::string> warnings = {};
};

struct WrittenReport {
  std::string path;  // DIR/report.html
  std::vector<std::string> warnings = {};
};

// Creates DIR/plots, builds the page with `build(plot_dir)` and writes DIR/report.html.
[[nodiscard]] core::Result<WrittenReport> WriteReportPage(
    const std::string& dir, const std::function<HtmlReport(const std::string& plot_dir)>& build);

}  // namespace headroom::format

#endif  // HEADROOM_FORMAT_HTML_H_
