#include "report/table.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/check.h"

namespace headroom::report {

void TextTable::AddRow(std::vector<std::string> cells) {
  HEADROOM_CHECK(cells.size() == columns_.size()) << cells.size() << " vs " << columns_.size();
  rows_.push_back(std::move(cells));
}

std::vector<size_t> TextTable::Widths() const {
  std::vector<size_t> widths;
  for (const Column& c : columns_) widths.push_back(c.header.size());
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  return widths;
}

std::string TextTable::RenderRow(const std::vector<std::string>& cells,
                                 const std::vector<size_t>& widths) const {
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    const size_t pad = widths[i] > cells[i].size() ? widths[i] - cells[i].size() : 0;
    const bool last = i + 1 == cells.size();
    if (columns_[i].align == Align::kRight) {
      line += std::string(pad, ' ') + cells[i];
    } else {
      line += cells[i];
      if (!last) line += std::string(pad, ' ');
    }
    if (!last) line += "  ";
  }
  return line + "\n";
}

std::string TextTable::RenderHeader(const std::vector<size_t>& widths) const {
  std::vector<std::string> headers;
  for (const Column& c : columns_) headers.push_back(c.header);
  return RenderRow(headers, widths);
}

std::string TextTable::Render() const {
  const auto widths = Widths();
  std::string out = RenderHeader(widths);
  for (const auto& row : rows_) out += RenderRow(row, widths);
  return out;
}

std::string FormatChange(double fraction) {
  const double pct = fraction * 100.0;
  return fmt::format("{:+.1f}%", std::abs(pct) < 0.05 ? 0.0 : pct);
}

std::string FormatSeconds(double s) {
  return s < 1 ? fmt::format("{:.0f} ms", s * 1e3) : fmt::format("{:.2f} s", s);
}

}  // namespace headroom::report
