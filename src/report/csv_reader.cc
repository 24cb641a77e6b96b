#include "report/csv_reader.h"

#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "core/parse.h"

namespace headroom::report {

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
  std::ifstream in(path);
  std::string line;
  if (!in || !std::getline(in, line)) {
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
  for (std::size_t n = 2; std::getline(in, line); ++n) {
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

}  // namespace headroom::report
