// TextTable: aligned plain-text tables for terminal output (numbers right-aligned, text left).
// Thread-compatible.
#ifndef HEADROOM_REPORT_TABLE_H_
#define HEADROOM_REPORT_TABLE_H_

#include <string>
#include <vector>

namespace headroom::report {

class TextTable {
 public:
  enum class Align { kLeft, kRight };
  struct Column {
    std::string header;
    Align align = Align::kRight;
  };

  explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

  // REQUIRES: cells.size() == number of columns.
  void AddRow(std::vector<std::string> cells);

  // Header, then rows, columns separated by two spaces, each line ending in '\n'.
  std::string Render() const;
  // Only the header line, or only row i, padded to the given widths (for streaming output).
  std::string RenderHeader(const std::vector<size_t>& widths) const;
  std::string RenderRow(const std::vector<std::string>& cells,
                        const std::vector<size_t>& widths) const;
  std::vector<size_t> Widths() const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// A relative change as "+12.3%" / "-4.0%", never "-0.0%".
std::string FormatChange(double fraction);
// A latency: "850 ms" below a second, else "1.25 s".
std::string FormatSeconds(double seconds);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_TABLE_H_
