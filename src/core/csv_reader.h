// The one CSV reader: the files the reports' directories hold (requests.csv, power.csv,
// results.csv, series.csv, ...) and the data built into the binary (data/validation,
// data/profiles). Columns are found by their header name; a cell may be double-quoted (then it
// may hold commas, and "" stands for one quote); a missing column, a row of the wrong width, an
// unclosed quote or a cell that is not what its column holds is an error naming the file, the
// line and the column. Request traces have their own reader on their hot path
// (sim/trace_reader.h). Thread-compatible.
#ifndef HEADROOM_CORE_CSV_READER_H_
#define HEADROOM_CORE_CSV_READER_H_

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace headroom::core {

// A column asked for, by its header name. An optional one may be missing from the header (a
// measurement the file did not take): its cells read as empty and CsvRow::Has is false.
struct CsvColumn {
  CsvColumn(const char* name) : name(name) {}  // NOLINT: lists of names read as lists of columns
  CsvColumn(std::string name, bool optional = false) : name(std::move(name)), optional(optional) {}
  static CsvColumn Optional(std::string name) { return CsvColumn(std::move(name), true); }

  std::string name;
  bool optional = false;
};

// One data row, its cells in the order of the columns asked for. A column is named by its index
// in that list or by its name. REQUIRES: a name is one of the columns asked for.
class CsvRow {
 public:
  // The cell as a finite number; kInvalidArgument "FILE:LINE: column 'e2e_s': 'x' is not a
  // number".
  [[nodiscard]] Result<double> Number(std::size_t column) const;
  [[nodiscard]] Result<double> Number(std::string_view name) const { return Number(Index(name)); }
  // The cell as a number, or nullopt when the cell is empty (a value the source did not have).
  [[nodiscard]] Result<std::optional<double>> OptionalNumber(std::size_t column) const;
  [[nodiscard]] Result<std::optional<double>> OptionalNumber(std::string_view name) const {
    return OptionalNumber(Index(name));
  }
  // The cell as a whole number in int's range (a cast of 1e300 or 2^31 would be undefined or
  // wrap).
  [[nodiscard]] Result<int> Integer(std::size_t column) const;
  [[nodiscard]] Result<int> Integer(std::string_view name) const { return Integer(Index(name)); }
  std::string_view Text(std::size_t column) const { return cells_[column]; }
  std::string_view Text(std::string_view name) const { return cells_[Index(name)]; }
  // False for an optional column the file lacks.
  bool Has(std::size_t column) const { return present_[column]; }
  bool Has(std::string_view name) const { return present_[Index(name)]; }

  std::size_t line() const { return line_; }
  // "FILE:LINE", for the caller's own errors about the row.
  std::string where() const;
  // kInvalidArgument "FILE:LINE: column 'NAME': 'CELL' is not WHAT".
  [[nodiscard]] Error NotA(std::size_t column, std::string_view what) const;
  [[nodiscard]] Error NotA(std::string_view name, std::string_view what) const {
    return NotA(Index(name), what);
  }

 private:
  friend class CsvParser;
  std::size_t Index(std::string_view name) const;

  const std::string* path_ = nullptr;
  const std::vector<CsvColumn>* columns_ = nullptr;
  std::vector<std::string_view> cells_;
  std::vector<bool> present_;
  std::size_t line_ = 0;
};

// Calls `row` for every non-empty data line of the CSV at `path`, with the cells of `columns`.
// Stops at the first error, its own or `row`'s. kNotFound when the file is missing.
[[nodiscard]] Status ReadCsv(const std::string& path, const std::vector<CsvColumn>& columns,
                             const std::function<Status(const CsvRow&)>& row);
// The same over `text` (a file built into the binary, a user's profile), named `source` in errors.
[[nodiscard]] Status ParseCsv(std::string_view text, const std::string& source,
                              const std::vector<CsvColumn>& columns,
                              const std::function<Status(const CsvRow&)>& row);

}  // namespace headroom::core

#endif  // HEADROOM_CORE_CSV_READER_H_
