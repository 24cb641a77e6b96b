// TextTable: aligned plain-text tables for terminal output (numbers right-aligned, text left),
// optionally coloured: a bold header, rows in a tone, cells already painted by a TextStyle. Widths
// count what a terminal shows, never escape codes, so columns line up coloured or not.
// Thread-compatible.
#ifndef HEADROOM_FORMAT_TABLE_H_
#define HEADROOM_FORMAT_TABLE_H_

#include <string>
#include <vector>

#include "format/text_style.h"

namespace headroom::format {

class TextTable {
 public:
  enum class Align { kLeft, kRight };
  struct Column {
    std::string header;
    Align align = Align::kRight;
  };

  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // `tone` paints the whole row (e.g. kGreen for the chosen one) when rendered with colour.
  // REQUIRES: cells.size() == number of columns.
  void AddRow(std::vector<std::string> cells, Tone tone = Tone::kPlain);

  // Header (bold with colour), then rows, columns separated by two spaces, each line ending in
  // '\n'. The default TextStyle is plain text.
  std::string Render(const TextStyle& style = TextStyle()) const;
  // Only the header line, or only one row, padded to the given widths (for streaming output).
  std::string RenderHeader(const std::vector<size_t>& widths,
                           const TextStyle& style = TextStyle()) const;
  std::string RenderRow(const std::vector<std::string>& cells, const std::vector<size_t>& widths,
                        const TextStyle& style = TextStyle(), Tone tone = Tone::kPlain) const;
  // Visible widths (VisibleWidth) of the widest cell of each column, header included.
  std::vector<size_t> Widths() const;

 private:
  struct Row {
    std::vector<std::string> cells;
    Tone tone = Tone::kPlain;
  };
  std::vector<Column> columns_;
  std::vector<Row> rows_;
};

// A relative change as "+12.3%" / "-4.0%", never "-0.0%".
std::string FormatChange(double fraction);
// A latency: "850 ms" below a second, else "1.25 s".
std::string FormatSeconds(double seconds);

}  // namespace headroom::format

#endif  // HEADROOM_FORMAT_TABLE_H_
