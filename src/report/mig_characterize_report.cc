#include "report/mig_characterize_report.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "core/csv_reader.h"
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

// A 0 or 1 cell.
core::Result<bool> ZeroOrOne(const core::CsvRow& row, std::string_view column) {
  if (row.Text(column) == "1") return true;
  if (row.Text(column) == "0") return false;
  return core::Fail(row.NotA(column, "0 or 1"));
}

// One results.csv row: the instance's result, and the whole GPU's in `gpu`.
core::Result<mig::InstanceResult> ReadInstanceRow(const core::CsvRow& row, mig::LayoutResult& gpu,
                                                  int& instance) {
  gpu.layout = std::string(row.Text("layout"));
  gpu.workload = std::string(row.Text("workload"));
  HEADROOM_ASSIGN_OR_RETURN(gpu.batch, row.Integer("batch"));
  HEADROOM_ASSIGN_OR_RETURN(instance, row.Integer("instance"));
  mig::InstanceResult in{.slice = std::string(row.Text("slice"))};
  HEADROOM_ASSIGN_OR_RETURN(in.sm_count, row.Integer("sm_count"));
  HEADROOM_ASSIGN_OR_RETURN(in.memory_gib, row.Number("memory_gib"));
  HEADROOM_ASSIGN_OR_RETURN(in.fits, ZeroOrOne(row, "fits"));
  HEADROOM_ASSIGN_OR_RETURN(in.samples_per_s, row.Number("samples_per_s"));
  HEADROOM_ASSIGN_OR_RETURN(in.busy, row.Number("busy"));
  HEADROOM_ASSIGN_OR_RETURN(in.power_activity_w, row.Number("power_activity_w"));
  HEADROOM_ASSIGN_OR_RETURN(in.power_sm_share_w, row.Number("power_sm_share_w"));
  HEADROOM_ASSIGN_OR_RETURN(in.j_per_sample_activity, row.Number("j_per_sample_activity"));
  HEADROOM_ASSIGN_OR_RETURN(in.j_per_sample_sm_share, row.Number("j_per_sample_sm_share"));
  HEADROOM_ASSIGN_OR_RETURN(gpu.gpu_samples_per_s, row.Number("gpu_samples_per_s"));
  HEADROOM_ASSIGN_OR_RETURN(gpu.gpu_power_w, row.Number("gpu_power_w"));
  HEADROOM_ASSIGN_OR_RETURN(gpu.gpu_j_per_sample, row.Number("gpu_j_per_sample"));
  HEADROOM_ASSIGN_OR_RETURN(gpu.clock_mhz, row.Number("clock_mhz"));
  HEADROOM_ASSIGN_OR_RETURN(gpu.power_limited, ZeroOrOne(row, "power_limited"));
  return in;
}

core::Status ReadMigResults(const std::string& path, std::vector<mig::LayoutResult>& results) {
  std::vector<core::CsvColumn> columns;
  for (std::string_view name : core::Split(kCsvHeader, ','))
    columns.emplace_back(std::string(name));
  HEADROOM_RETURN_IF_ERROR(
      core::ReadCsv(path, columns, [&](const core::CsvRow& row) -> core::Status {
        mig::LayoutResult gpu;
        int instance = 0;
        HEADROOM_ASSIGN_OR_RETURN(mig::InstanceResult in, ReadInstanceRow(row, gpu, instance));
        if (instance == 0) {
          results.push_back(std::move(gpu));
        } else if (results.empty() || results.back().layout != gpu.layout ||
                   results.back().workload != gpu.workload ||
                   results.back().instances != instance) {
          return core::Fail(core::Error::InvalidArgument(
              fmt::format("{}: instance {} of layout '{}' and workload '{}' does not follow "
                          "instance {} of the same",
                          row.where(), instance, gpu.layout, gpu.workload, instance - 1)));
        }
        results.back().per_instance.push_back(std::move(in));
        results.back().instances = static_cast<int>(results.back().per_instance.size());
        return core::Ok();
      }));
  if (results.empty()) {
    return core::Fail(core::Error::InvalidArgument(fmt::format("{}: no results", path)));
  }
  return core::Ok();
}

using MigCharIn = MigCharacterizeInputs;
const char* MigResultsFileName(const MigCharIn&) { return kMigResultsFile; }

// mig-characterize.json: the inputs, and where the results are.
constexpr auto kMigCharacterizeFileFields = std::tuple{
    format::Group<MigCharIn>(
        "inputs", std::tuple{format::Field("power_limit_w", &MigCharIn::power_limit_w),
                             format::Field("version", &MigCharIn::version),
                             format::Field("workloads", &MigCharIn::workloads),
                             format::Field("layouts", &MigCharIn::layouts),
                             format::Field("mig", &MigCharIn::geometry, kMigGeometryFields)}),
    format::Computed<MigCharIn>("results", &MigResultsFileName)};

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
  ordered_json j = ordered_json::object();
  format::WriteFields(j, report.inputs, kMigCharacterizeFileFields);
  return core::WriteFileAtomically(fmt::format("{}/{}", dir, kMigCharacterizeFile),
                                   j.dump(2) + "\n");
}

core::Result<MigCharacterizeReport> ReadMigCharacterizeDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return core::Fail(core::Error::NotFound(fmt::format("{}: no such directory", dir)));
  }
  const std::string path = fmt::format("{}/{}", dir, kMigCharacterizeFile);
  HEADROOM_ASSIGN_OR_RETURN(const json j, format::ReadJsonObject(path));
  format::FieldReader r(path, kMigCharacterizeWriter);
  MigCharacterizeReport report;
  format::ReadFields(r, j, "", report.inputs, kMigCharacterizeFileFields);
  if (r.error()) return core::Fail(*r.error());
  const std::string csv = fmt::format("{}/{}", dir, kMigResultsFile);
  if (!std::filesystem::exists(csv, ec)) {
    return core::Fail(core::Error::NotFound(fmt::format("{}: missing", csv)));
  }
  HEADROOM_RETURN_IF_ERROR(ReadMigResults(csv, report.results));
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
