// Strict, streaming reading of the CSV files the reports' directories hold (requests.csv,
// power.csv, results.csv, series.csv, ...): columns are found by their header name, and a
// missing column, a short row or a cell that is not a number is an error naming the file, the
// line and the column. Thread-compatible.
#ifndef HEADROOM_CORE_CSV_READER_H_
#define HEADROOM_CORE_CSV_READER_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace headroom::core {

// One data row, its cells in the order of the columns asked for.
class CsvRow {
 public:
  // The cell as a number; kInvalidArgument "FILE:LINE: column 'e2e_s': 'x' is not a number".
  [[nodiscard]] core::Result<double> Number(std::size_t column) const;
  // The cell as a number, or empty when the cell is empty (a value the source did not have).
  [[nodiscard]] core::Result<std::optional<double>> OptionalNumber(std::size_t column) const;
  std::string_view Text(std::size_t column) const { return cells_[column]; }
  std::size_t line() const { return line_; }

 private:
  friend core::Status ReadCsv(const std::string&, const std::vector<std::string>&,
                              const std::function<core::Status(const CsvRow&)>&);
  const std::string* path_ = nullptr;
  const std::vector<std::string>* names_ = nullptr;
  std::vector<std::string_view> cells_;
  std::size_t line_ = 0;
};

// Calls `row` for every non-empty data line of the CSV at `path`, with the cells of `columns`
// (by header name, in that order). Stops at the first error, its own or `row`'s. kNotFound when
// the file is missing.
[[nodiscard]] core::Status ReadCsv(const std::string& path, const std::vector<std::string>& columns,
                                   const std::function<core::Status(const CsvRow&)>& row);

}  // namespace headroom::core

#endif  // HEADROOM_CORE_CSV_READER_H_
