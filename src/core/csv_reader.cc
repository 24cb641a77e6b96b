#include "core/csv_reader.h"

#include <array>
#include <deque>
#include <filesystem>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "core/check.h"
#include "core/files.h"
#include "core/parse.h"

namespace headroom::core {
namespace {

// The lines of a file, in chunks: requests.csv can be hundreds of megabytes.
class FileLines {
 public:
  explicit FileLines(RegularFile file) : file_(std::move(file)) {}

  // The next line without its '\n', valid until the next call; false at the end of the file.
  Result<bool> Next(std::string_view& line) {
    for (;;) {
      const std::size_t end = buffer_.find('\n', start_);
      if (end != std::string::npos) {
        line = std::string_view(buffer_).substr(start_, end - start_);
        start_ = end + 1;
        return true;
      }
      buffer_.erase(0, start_);
      start_ = 0;
      HEADROOM_ASSIGN_OR_RETURN(std::size_t n, file_.Read(chunk_.data(), chunk_.size()));
      if (n == 0) {
        start_ = buffer_.size();
        line = buffer_;
        return !line.empty();
      }
      buffer_.append(chunk_.data(), n);
    }
  }

 private:
  RegularFile file_;
  std::string buffer_;
  std::size_t start_ = 0;  // where the next line begins in buffer_
  std::array<char, 64 * 1024> chunk_{};
};

class TextLines {
 public:
  explicit TextLines(std::string_view text) : rest_(text) {}

  Result<bool> Next(std::string_view& line) {
    if (rest_.empty()) return false;
    const std::size_t end = rest_.find('\n');
    line = rest_.substr(0, end);
    rest_ = end == std::string_view::npos ? std::string_view() : rest_.substr(end + 1);
    return true;
  }

 private:
  std::string_view rest_;
};

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The cells of one line: split at commas outside double quotes, each trimmed, a quoted one
// without its quotes ("" inside is one quote: such cells are rebuilt in `unquoted`). The error
// names the cell, counted from 1.
Status SplitCells(std::string_view line, std::vector<std::string_view>& cells,
                  std::deque<std::string>& unquoted) {
  cells.clear();
  unquoted.clear();
  std::size_t i = 0;
  for (;;) {
    while (i < line.size() && IsBlank(line[i])) ++i;
    if (i < line.size() && line[i] == '"') {
      std::size_t close = line.find('"', i + 1);
      std::string_view cell = line.substr(i + 1, close - i - 1);
      if (close != std::string_view::npos && close + 1 < line.size() && line[close + 1] == '"') {
        std::string& text = unquoted.emplace_back();
        for (close = i + 1; close < line.size(); ++close) {
          if (line[close] != '"') {
            text += line[close];
          } else if (close + 1 < line.size() && line[close + 1] == '"') {
            text += '"';
            ++close;
          } else {
            break;
          }
        }
        cell = text;
      }
      if (close >= line.size()) {
        return Fail(Error::InvalidArgument(
            fmt::format("cell {}: the double quote is not closed", cells.size() + 1)));
      }
      cells.push_back(cell);
      i = close + 1;
      while (i < line.size() && IsBlank(line[i])) ++i;
      if (i < line.size() && line[i] != ',') {
        return Fail(Error::InvalidArgument(fmt::format(
            "cell {}: text after the closing double quote (expected a comma)", cells.size())));
      }
    } else {
      const std::size_t comma = line.find(',', i);
      cells.push_back(Trim(line.substr(i, comma == std::string_view::npos ? comma : comma - i)));
      i = comma == std::string_view::npos ? line.size() : comma;
    }
    if (i >= line.size()) return Ok();
    ++i;  // past the comma
  }
}

}  // namespace

// The header's columns found once, then each data line split into the row handed out.
class CsvParser {
 public:
  CsvParser(const std::string& source, const std::vector<CsvColumn>& columns) {
    row_.path_ = &source;
    row_.columns_ = &columns;
    row_.cells_.resize(columns.size());
    row_.present_.resize(columns.size());
  }

  template <typename Lines>
  Status Run(Lines& lines, const std::function<Status(const CsvRow&)>& row) {
    std::string_view line;
    HEADROOM_ASSIGN_OR_RETURN(bool has_header, lines.Next(line));
    if (!has_header || Trim(line).empty()) {
      return Fail(Error::InvalidArgument(fmt::format("{}:1: no header line", Source())));
    }
    HEADROOM_RETURN_IF_ERROR(Header(line));
    for (std::size_t n = 2;; ++n) {
      HEADROOM_ASSIGN_OR_RETURN(bool more, lines.Next(line));
      if (!more) return Ok();
      if (Trim(line).empty()) continue;
      row_.line_ = n;
      if (auto split = SplitCells(line, cells_, unquoted_); !split) {
        return Fail(split.error().WithContext(row_.where()));
      }
      if (cells_.size() != width_) {
        return Fail(Error::InvalidArgument(
            fmt::format("{}: expected {} fields, found {}", row_.where(), width_, cells_.size())));
      }
      for (std::size_t c = 0; c < index_.size(); ++c) {
        row_.cells_[c] = row_.present_[c] ? cells_[index_[c]] : std::string_view();
      }
      HEADROOM_RETURN_IF_ERROR(row(row_));
    }
  }

 private:
  const std::string& Source() const { return *row_.path_; }

  Status Header(std::string_view line) {
    if (auto split = SplitCells(line, cells_, unquoted_); !split) {
      return Fail(split.error().WithContext(Source() + ":1"));
    }
    width_ = cells_.size();
    const std::vector<CsvColumn>& columns = *row_.columns_;
    index_.assign(columns.size(), 0);
    for (std::size_t c = 0; c < columns.size(); ++c) {
      int found = 0;
      for (std::size_t i = 0; i < cells_.size(); ++i) {
        if (cells_[i] != columns[c].name) continue;
        index_[c] = i;
        ++found;
      }
      // A name given twice would leave it unclear which cells are the column's.
      if (found > 1) {
        return Fail(Error::InvalidArgument(
            fmt::format("{}:1: column '{}' appears more than once", Source(), columns[c].name)));
      }
      if (found == 0 && !columns[c].optional) {
        return Fail(Error::InvalidArgument(
            fmt::format("{}:1: no column '{}' in the header", Source(), columns[c].name)));
      }
      row_.present_[c] = found == 1;
    }
    return Ok();
  }

  CsvRow row_;
  std::size_t width_ = 0;
  std::vector<std::size_t> index_;  // per column asked for, its place in the header
  std::vector<std::string_view> cells_;
  std::deque<std::string> unquoted_;
};

std::size_t CsvRow::Index(std::string_view name) const {
  for (std::size_t c = 0; c < columns_->size(); ++c) {
    if ((*columns_)[c].name == name) return c;
  }
  HEADROOM_CHECK(false) << "column '" << name << "' was not asked for";
  return 0;
}

std::string CsvRow::where() const { return fmt::format("{}:{}", *path_, line_); }

Error CsvRow::NotA(std::size_t column, std::string_view what) const {
  return Error::InvalidArgument(fmt::format("{}: column '{}': '{}' is not {}", where(),
                                            (*columns_)[column].name, cells_[column], what));
}

Result<double> CsvRow::Number(std::size_t column) const {
  auto value = ParseDouble(cells_[column]);
  if (!value) return Fail(NotA(column, "a number"));
  return *value;
}

Result<std::optional<double>> CsvRow::OptionalNumber(std::size_t column) const {
  if (Trim(cells_[column]).empty()) return std::optional<double>();
  HEADROOM_ASSIGN_OR_RETURN(double value, Number(column));
  return std::optional<double>(value);
}

Result<int> CsvRow::Integer(std::size_t column) const {
  auto v = ParseInteger(cells_[column]);
  if (!v || *v < std::numeric_limits<int>::min() || *v > std::numeric_limits<int>::max()) {
    return Fail(NotA(column, "a whole number in int's range"));
  }
  return static_cast<int>(*v);
}

Status ReadCsv(const std::string& path, const std::vector<CsvColumn>& columns,
               const std::function<Status(const CsvRow&)>& row) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return Fail(Error::NotFound(fmt::format("{}: missing", path)));
  }
  HEADROOM_ASSIGN_OR_RETURN(RegularFile file, RegularFile::Open(path));
  FileLines lines(std::move(file));
  return CsvParser(path, columns).Run(lines, row);
}

Status ParseCsv(std::string_view text, const std::string& source,
                const std::vector<CsvColumn>& columns,
                const std::function<Status(const CsvRow&)>& row) {
  TextLines lines(text);
  return CsvParser(source, columns).Run(lines, row);
}

}  // namespace headroom::core
