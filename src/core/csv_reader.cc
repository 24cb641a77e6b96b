#include "core/csv_reader.h"

#include <array>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "core/files.h"
#include "core/parse.h"

namespace headroom::core {
namespace {

// The lines of a file, in chunks: requests.csv can be hundreds of megabytes.
class CsvLines {
 public:
  explicit CsvLines(core::RegularFile file) : file_(std::move(file)) {}

  // The next line without its '\n' into `line`; false at the end of the file.
  core::Result<bool> Next(std::string& line) {
    for (;;) {
      const std::size_t end = buffer_.find('\n', start_);
      if (end != std::string::npos) {
        line.assign(buffer_, start_, end - start_);
        start_ = end + 1;
        return true;
      }
      buffer_.erase(0, start_);
      start_ = 0;
      HEADROOM_ASSIGN_OR_RETURN(std::size_t n, file_.Read(chunk_.data(), chunk_.size()));
      if (n == 0) {
        line = std::move(buffer_);
        buffer_.clear();
        return !line.empty();
      }
      buffer_.append(chunk_.data(), n);
    }
  }

 private:
  core::RegularFile file_;
  std::string buffer_;
  std::size_t start_ = 0;  // where the next line begins in buffer_
  std::array<char, 64 * 1024> chunk_{};
};

}  // namespace

core::Result<double> CsvRow::Number(std::size_t column) const {
  auto value = core::ParseDouble(cells_[column]);
  if (!value) {
    return core::Fail(
        core::Error::InvalidArgument(fmt::format("{}:{}: column '{}': '{}' is not a number", *path_,
                                                 line_, (*names_)[column], cells_[column])));
  }
  return *value;
}

core::Result<std::optional<double>> CsvRow::OptionalNumber(std::size_t column) const {
  if (core::Trim(cells_[column]).empty()) return std::optional<double>();
  HEADROOM_ASSIGN_OR_RETURN(double value, Number(column));
  return std::optional<double>(value);
}

core::Status ReadCsv(const std::string& path, const std::vector<std::string>& columns,
                     const std::function<core::Status(const CsvRow&)>& row) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) {
    return core::Fail(core::Error::NotFound(fmt::format("{}: missing", path)));
  }
  HEADROOM_ASSIGN_OR_RETURN(core::RegularFile file, core::RegularFile::Open(path));
  CsvLines lines(std::move(file));
  std::string line;
  HEADROOM_ASSIGN_OR_RETURN(bool has_header, lines.Next(line));
  if (!has_header) {
    return core::Fail(core::Error::InvalidArgument(fmt::format("{}:1: no header line", path)));
  }
  const std::vector<std::string_view> header = core::Split(core::Trim(line), ',');
  std::vector<std::size_t> index;
  for (const std::string& name : columns) {
    std::size_t i = 0;
    while (i < header.size() && core::Trim(header[i]) != name) ++i;
    if (i == header.size()) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("{}:1: no column '{}' in the header", path, name)));
    }
    index.push_back(i);
  }
  CsvRow r;
  r.path_ = &path;
  r.names_ = &columns;
  r.cells_.resize(columns.size());
  for (std::size_t n = 2;; ++n) {
    HEADROOM_ASSIGN_OR_RETURN(bool more, lines.Next(line));
    if (!more) break;
    if (core::Trim(line).empty()) continue;
    const std::vector<std::string_view> cells = core::Split(line, ',');
    if (cells.size() != header.size()) {
      return core::Fail(core::Error::InvalidArgument(fmt::format(
          "{}:{}: {} cells where the header has {}", path, n, cells.size(), header.size())));
    }
    for (std::size_t c = 0; c < index.size(); ++c) r.cells_[c] = core::Trim(cells[index[c]]);
    r.line_ = n;
    HEADROOM_RETURN_IF_ERROR(row(r));
  }
  return core::Ok();
}

}  // namespace headroom::core
