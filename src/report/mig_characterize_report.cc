#include "report/mig_characterize_report.h"

#include <algorithm>
#include <filesystem>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "core/files.h"
#include "core/parse.h"
#include "format/table.h"

namespace headroom::report {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr const char* kMigCharacterizeWriter = "headroom mig characterize --report";
constexpr const char* kCsvHeader =
    "layout,workload,batch,instance,slice,sm_count,memory_gib,fits,samples_per_s,busy,"
    "power_activity_w,power_sm_share_w,j_per_sample_activity,j_per_sample_sm_share,"
    "gpu_samples_per_s,gpu_power_w,gpu_j_per_sample,clock_mhz,power_limited";
constexpr std::size_t kCsvColumns = 19;

// The cells of one results.csv line: the layout (first, double-quoted: it holds commas), then
// plain cells.
core::Result<std::vector<std::string>> Cells(std::string_view line) {
  std::vector<std::string> cells;
  if (line.empty() || line.front() != '"') {
    return core::Fail(core::Error::InvalidArgument("expected the layout in double quotes first"));
  }
  const std::size_t close = line.find('"', 1);
  if (close == std::string_view::npos || close + 1 >= line.size() || line[close + 1] != ',') {
    return core::Fail(core::Error::InvalidArgument("the quoted layout is not closed by '\",'"));
  }
  cells.emplace_back(line.substr(1, close - 1));
  for (std::string_view cell : core::Split(line.substr(close + 2), ',')) {
    cells.emplace_back(core::Trim(cell));
  }
  if (cells.size() != kCsvColumns) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("expected {} columns, found {}", kCsvColumns, cells.size())));
  }
  return cells;
}

// Reads each numeric cell by column, keeping the first that is not what it should be.
class CsvRow {
 public:
  explicit CsvRow(const std::vector<std::string>& cells) : cells_(cells) {}
  double Number(std::size_t column) {
    auto v = core::ParseDouble(cells_[column]);
    if (!v) Bad(column, "a number");
    return v.value_or(0);
  }
  // A whole number in int's range: casting 1e300 or 2^31 to int would be undefined or wrap.
  int Integer(std::size_t column) {
    auto v = core::ParseInteger(cells_[column]);
    if (v && *v >= std::numeric_limits<int>::min() && *v <= std::numeric_limits<int>::max()) {
      return static_cast<int>(*v);
    }
    Bad(column, "a whole number in int's range");
    return 0;
  }
  bool Flag(std::size_t column) {
    if (cells_[column] != "0" && cells_[column] != "1") Bad(column, "0 or 1");
    return cells_[column] == "1";
  }
  // The first column that is not what it should be, and what it should be.
  const std::optional<std::pair<std::size_t, const char*>>& bad() const { return bad_; }

 private:
  void Bad(std::size_t column, const char* expected) {
    if (!bad_) bad_.emplace(column, expected);
  }
  const std::vector<std::string>& cells_;
  std::optional<std::pair<std::size_t, const char*>> bad_;
};

std::string ColumnName(std::size_t column) {
  return std::string(core::Split(kCsvHeader, ',')[column]);
}

core::Status ReadResults(const std::string& path, std::vector<mig::LayoutResult>& results) {
  HEADROOM_ASSIGN_OR_RETURN(const std::string text, core::ReadFile(path));
  const auto lines = core::Split(text, '\n');
  if (lines.empty() || core::Trim(lines[0]) != kCsvHeader) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{}:1: expected the header {}", path, kCsvHeader)));
  }
  for (std::size_t n = 1; n < lines.size(); ++n) {
    const std::string_view line = core::Trim(lines[n]);
    if (line.empty()) continue;
    const auto fail = [&](const std::string& what) {
      return core::Fail(core::Error::InvalidArgument(fmt::format("{}:{}: {}", path, n + 1, what)));
    };
    auto cells = Cells(line);
    if (!cells) return fail(cells.error().message());
    const std::vector<std::string>& c = *cells;
    CsvRow row(c);
    mig::InstanceResult in{.slice = c[4],
                           .sm_count = row.Integer(5),
                           .memory_gib = row.Number(6),
                           .fits = row.Flag(7),
                           .samples_per_s = row.Number(8),
                           .busy = row.Number(9),
                           .power_activity_w = row.Number(10),
                           .power_sm_share_w = row.Number(11),
                           .j_per_sample_activity = row.Number(12),
                           .j_per_sample_sm_share = row.Number(13)};
    const int batch = row.Integer(2);
    const int instance = row.Integer(3);
    mig::LayoutResult gpu{.layout = c[0],
                          .workload = c[1],
                          .batch = batch,
                          .gpu_samples_per_s = row.Number(14),
                          .gpu_power_w = row.Number(15),
                          .gpu_j_per_sample = row.Number(16),
                          .clock_mhz = row.Number(17),
                          .power_limited = row.Flag(18)};
    if (const auto& bad = row.bad()) {
      return fail(fmt::format("column '{}': '{}' is not {}", ColumnName(bad->first), c[bad->first],
                              bad->second));
    }
    if (instance == 0) {
      results.push_back(std::move(gpu));
    } else if (results.empty() || results.back().layout != c[0] ||
               results.back().workload != c[1] || results.back().instances != instance) {
      return fail(
          fmt::format("instance {} of layout '{}' and workload '{}' does not follow "
                      "instance {} of the same",
                      instance, c[0], c[1], instance - 1));
    }
    results.back().per_instance.push_back(std::move(in));
    results.back().instances = static_cast<int>(results.back().per_instance.size());
  }
  if (results.empty()) {
    return core::Fail(core::Error::InvalidArgument(fmt::format("{}: no results", path)));
  }
  return core::Ok();
}

ordered_json InputsJson(const MigCharacterizeInputs& in) {
  return {{"inputs",
           {{"power_limit_w", in.power_limit_w},
            {"version", in.version},
            {"workloads", in.workloads},
            {"layouts", in.layouts},
            {"mig", GeometryJson(in.geometry)}}},
          {"results", kMigResultsFile}};
}

std::vector<std::string> Texts(format::FieldReader& r, const json& j, const std::string& key,
                               const std::string& at, std::optional<core::Error>& invalid,
                               const std::string& path) {
  std::vector<std::string> out;
  const json& list = r.List(j, key, at);
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].is_string()) {
      out.push_back(list[i].get<std::string>());
    } else if (!invalid) {
      invalid = core::Error::InvalidArgument(fmt::format(
          "{}: field '{}{}[{}]' is of the wrong type (expected a string)", path, at, key, i));
    }
  }
  return out;
}

}  // namespace

std::vector<MigWorkloadBest> BestPerWorkload(const std::vector<mig::LayoutResult>& results) {
  std::vector<MigWorkloadBest> out;
  std::map<std::string, std::size_t> index;
  for (const mig::LayoutResult& r : results) {
    auto [it, added] = index.emplace(r.workload, out.size());
    if (added) out.push_back({.workload = r.workload});
    MigWorkloadBest& b = out[it->second];
    if (r.layout == "MIG off") b.off = &r;
    if (r.gpu_samples_per_s <= 0) continue;
    if (b.fastest == nullptr || r.gpu_samples_per_s > b.fastest->gpu_samples_per_s) b.fastest = &r;
    if (b.leanest == nullptr || r.gpu_j_per_sample < b.leanest->gpu_j_per_sample) b.leanest = &r;
  }
  return out;
}

std::string MigResultsCsv(const std::vector<mig::LayoutResult>& results) {
  std::string csv = std::string(kCsvHeader) + "\n";
  for (const mig::LayoutResult& r : results) {
    for (std::size_t i = 0; i < r.per_instance.size(); ++i) {
      const mig::InstanceResult& in = r.per_instance[i];
      csv += fmt::format(
          "\"{}\",{},{},{},{},{},{:.2f},{},{:.3f},{:.4f},{:.2f},{:.2f},{:.6g},{:.6g},{:.3f},{:.2f},"
          "{:.6g},{:.0f},{}\n",
          r.layout, r.workload, r.batch, i, in.slice, in.sm_count, in.memory_gib, in.fits ? 1 : 0,
          in.samples_per_s, in.busy, in.power_activity_w, in.power_sm_share_w,
          in.j_per_sample_activity, in.j_per_sample_sm_share, r.gpu_samples_per_s, r.gpu_power_w,
          r.gpu_j_per_sample, r.clock_mhz, r.power_limited ? 1 : 0);
    }
  }
  return csv;
}

core::Status CreateMigOutDir(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return core::Fail(core::Error::Unavailable(
        fmt::format("--out {}: cannot create the directory: {}", dir, ec.message())));
  }
  return core::Ok();
}

core::Status WriteMigCharacterizeDir(const std::string& dir, const MigCharacterizeReport& report) {
  HEADROOM_RETURN_IF_ERROR(CreateMigOutDir(dir));
  HEADROOM_RETURN_IF_ERROR(core::WriteFileAtomically(fmt::format("{}/{}", dir, kMigResultsFile),
                                                     MigResultsCsv(report.results)));
  return core::WriteFileAtomically(fmt::format("{}/{}", dir, kMigCharacterizeFile),
                                   InputsJson(report.inputs).dump(2) + "\n");
}

core::Result<MigCharacterizeReport> ReadMigCharacterizeDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return core::Fail(core::Error::NotFound(fmt::format("{}: no such directory", dir)));
  }
  const std::string path = fmt::format("{}/{}", dir, kMigCharacterizeFile);
  HEADROOM_ASSIGN_OR_RETURN(const json j, format::ReadJsonObject(path));
  format::FieldReader r(path, kMigCharacterizeWriter);
  std::optional<core::Error> invalid;
  MigCharacterizeReport report;
  const json& in = r.Object(j, "inputs", "");
  report.inputs = {.power_limit_w = r.Number(in, "power_limit_w", "inputs."),
                   .version = r.Text(in, "version", "inputs."),
                   .geometry = ReadGeometry(r, r.Object(in, "mig", "inputs."), "inputs.mig."),
                   .workloads = Texts(r, in, "workloads", "inputs.", invalid, path),
                   .layouts = Texts(r, in, "layouts", "inputs.", invalid, path)};
  if (r.error()) return core::Fail(*r.error());
  if (invalid) return core::Fail(*invalid);
  const std::string csv = fmt::format("{}/{}", dir, kMigResultsFile);
  if (!std::filesystem::exists(csv, ec)) {
    return core::Fail(core::Error::NotFound(fmt::format("{}: missing", csv)));
  }
  HEADROOM_RETURN_IF_ERROR(ReadResults(csv, report.results));
  for (const mig::LayoutResult& result : report.results) {
    auto instances = InstancesOfText(report.inputs.geometry, result.layout);
    if (!instances || instances->size() != result.per_instance.size()) {
      return core::Fail(core::Error::InvalidArgument(fmt::format(
          "{}: layout '{}' {}", csv, result.layout,
          instances ? fmt::format("has {} instances, but {} rows", instances->size(),
                                  result.per_instance.size())
                    : fmt::format("cannot be drawn: {}", instances.error().message()))));
    }
  }
  return report;
}

std::string MigCharacterizeQuestion(const MigCharacterizeReport& report) {
  const std::size_t n = report.inputs.workloads.size();
  return fmt::format(
      "Which MIG layout gives {} the most throughput and the least energy per sample on one {} "
      "(power limit {:.0f} W), each instance running its own copy?",
      n == 1 ? report.inputs.workloads.front() : fmt::format("{} training workloads", n),
      report.inputs.geometry.gpu, report.inputs.power_limit_w);
}

std::string MigCharacterizeAnswer(const MigCharacterizeReport& report) {
  const std::vector<MigWorkloadBest> best = BestPerWorkload(report.results);
  struct Tally {
    int wins = 0;
    double lo = 0, hi = 0;  // change against MIG off where it wins
    std::size_t first = 0;  // sweep order, for ties
  };
  // The layout that wins most often on one measure, with the range of its changes.
  const auto most = [&](auto pick, auto change) -> std::string {
    std::map<std::string, Tally> tally;
    int counted = 0;
    for (std::size_t w = 0; w < best.size(); ++w) {
      const mig::LayoutResult* b = pick(best[w]);
      if (b == nullptr || best[w].off == nullptr || best[w].off->gpu_samples_per_s <= 0) continue;
      ++counted;
      const double c = change(*b, *best[w].off);
      auto [it, added] = tally.emplace(b->layout, Tally{.lo = c, .hi = c, .first = w});
      ++it->second.wins;
      it->second.lo = std::min(it->second.lo, c);
      it->second.hi = std::max(it->second.hi, c);
    }
    const std::pair<const std::string, Tally>* top = nullptr;
    for (const auto& entry : tally) {
      if (top == nullptr || entry.second.wins > top->second.wins ||
          (entry.second.wins == top->second.wins && entry.second.first < top->second.first)) {
        top = &entry;
      }
    }
    if (top == nullptr) return "none (nothing runs)";
    const Tally& t = top->second;
    const std::string range = t.lo == t.hi ? format::FormatChange(t.lo)
                                           : fmt::format("{} to {}", format::FormatChange(t.lo),
                                                         format::FormatChange(t.hi));
    const std::string name = ShortLayoutName(report.inputs.geometry, top->first);
    if (counted == 1) return fmt::format("{} ({} vs MIG off)", name, range);
    return fmt::format("{} for {} of {} workloads ({} vs MIG off)", name, t.wins, counted, range);
  };
  return fmt::format("Least energy per sample: {}; most throughput: {}",
                     most([](const MigWorkloadBest& b) { return b.leanest; },
                          [](const mig::LayoutResult& r, const mig::LayoutResult& off) {
                            return r.gpu_j_per_sample / off.gpu_j_per_sample - 1;
                          }),
                     most([](const MigWorkloadBest& b) { return b.fastest; },
                          [](const mig::LayoutResult& r, const mig::LayoutResult& off) {
                            return r.gpu_samples_per_s / off.gpu_samples_per_s - 1;
                          }));
}

}  // namespace headroom::report
