#include "format/table.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/check.h"

namespace headroom::format {

void TextTable::AddRow(std::vector<std::string> cells, Tone tone) {
  HEADROOM_CHECK(cells.size() == columns_.size()) << cells.size() << " vs " << columns_.size();
  rows_.push_back({.cells = std::move(cells), .tone = tone});
}

std::vector<size_t> TextTable::Widths() const {
  std::vector<size_t> widths;
  for (const Column& c : columns_) widths.push_back(VisibleWidth(c.header));
  for (const Row& row : rows_) {
    for (size_t i = 0; i < row.cells.size(); ++i) {
      widths[i] = std::max(widths[i], VisibleWidth(row.cells[i]));
    }
  }
  return widths;
}

std::string TextTable::RenderRow(const std::vector<std::string>& cells,
                                 const std::vector<size_t>& widths, const TextStyle& style,
                                 Tone tone) const {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    const size_t width = VisibleWidth(cells[i]);
    const size_t pad = widths[i] > width ? widths[i] - width : 0;
    const bool last = i + 1 == cells.size();
    // Each cell painted on its own: a cell painted already keeps its own colour.
    const std::string cell = style.Paint(cells[i], tone);
    if (columns_[i].align == Align::kRight) {
      line += std::string(pad, ' ') + cell;
    } else {
      line += cell;
      if (!last) line += std::string(pad, ' ');
    }
    if (!last) line += "  ";
  }
  return line + "\n";
}

std::string TextTable::RenderHeader(const std::vector<size_t>& widths,
                                    const TextStyle& style) const {
  std::vector<std::string> headers;
  for (const Column& c : columns_) headers.push_back(c.header);
  return RenderRow(headers, widths, style, Tone::kBold);
}

std::string TextTable::Render(const TextStyle& style) const {
  const auto widths = Widths();
  std::string out = RenderHeader(widths, style);
  for (const Row& row : rows_) out += RenderRow(row.cells, widths, style, row.tone);
  return out;
}

std::string FormatChange(double fraction) {
  const double pct = fraction * 100.0;
  return fmt::format("{:+.1f}%", std::abs(pct) < 0.05 ? 0.0 : pct);
}

std::string FormatSeconds(double s) {
  return s < 1 ? fmt::format("{:.0f} ms", s * 1e3) : fmt::format("{:.2f} s", s);
}

}  // namespace headroom::format
