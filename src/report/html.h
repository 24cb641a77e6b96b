// Pieces of self-contained HTML reports: text escaping, the page around a body (inline CSS, no
// external resource of any kind), and an SVG file rendered by gnuplot made fit to inline.
// Pure functions except InlineSvgFile, which reads one file. Thread-compatible.
#ifndef HEADROOM_REPORT_HTML_H_
#define HEADROOM_REPORT_HTML_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace headroom::report {

// Escapes & < > " ' so that `text` reads as itself in element content and attribute values.
std::string HtmlEscape(std::string_view text);

// One table row: each cell escaped, inside <td> (or `tag`), the row of class `css_class` if any.
std::string HtmlTableRow(const std::vector<std::string>& cells, const char* tag = "td",
                         const char* css_class = nullptr);

// A whole HTML5 document: UTF-8, the title, the house CSS, and `body_html` inside <main>.
std::string HtmlPage(std::string_view title, std::string_view body_html);

// The <svg> element of an SVG document, ready to sit inside HTML: the XML prolog dropped, the
// title set to `title`, and every id (and each reference to one) prefixed with `id_prefix` so
// that several plots on one page never share an id. kInvalidArgument when `svg` holds no <svg>.
[[nodiscard]] core::Result<std::string> InlineSvg(std::string_view svg, std::string_view title,
                                                  std::string_view id_prefix);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_HTML_H_
