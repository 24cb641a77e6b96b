#include "report/measure_dir.h"

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/csv_reader.h"
#include "format/json_fields.h"

namespace headroom::report {
namespace {

using nlohmann::json;

constexpr const char* kMeasureWriter = "headroom measure --out";

void ReadSummary(format::FieldReader& r, const json& j, MeasureReport& m) {
  for (const json& c : r.List(j, "command", "")) {
    if (c.is_string()) m.command.push_back(c.get<std::string>());
  }
  m.backend = r.Text(j, "backend", "");
  m.exit_code = r.Integer(j, "exit_code", "");
  if (!r.Flag(j, "complete", "")) m.error = r.Text(j, "error", "");
  m.duration_s = r.Number(j, "duration_s", "");
  const json& inputs = r.Object(j, "inputs", "");
  m.interval = r.Text(inputs, "interval", "inputs.");
  m.version = r.Text(inputs, "version", "inputs.");
  const json& gpus = r.List(j, "gpus", "");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    const std::string at = fmt::format("gpus[{}].", i);
    const json& g = gpus[i];
    m.gpus.push_back({.index = r.Count<int>(g, "gpu", at),
                      .name = r.Text(g, "name", at),
                      .energy_source = r.Text(g, "energy_source", at),
                      .energy_j = r.Number(g, "energy_j", at),
                      .avg_power_w = r.Number(g, "avg_power_w", at),
                      .peak_power_w = r.Number(g, "peak_power_w", at),
                      .capped_s = r.Number(g, "time_power_capped_s", at),
                      .throttled_s = r.Number(g, "time_throttled_s", at)});
  }
  const json& total = r.Object(j, "total", "");
  m.energy_j = r.Number(total, "energy_j", "total.");
  m.avg_power_w = r.Number(total, "avg_power_w", "total.");
  const auto work = j.find("work");
  if (work == j.end() || !(work->is_null() || work->is_object())) {
    r.Object(j, "work", "");  // records the error
  } else if (work->is_object()) {
    m.work = r.Number(*work, "units", "work.");
    m.unit = r.Text(*work, "unit", "work.");
  }
  const json& phases = r.List(j, "phases", "");
  for (std::size_t i = 0; i < phases.size(); ++i) {
    const std::string at = fmt::format("phases[{}].", i);
    const json& p = phases[i];
    MeasureReport::Phase phase{.name = r.Text(p, "name", at),
                               .duration_s = r.Number(p, "duration_s", at),
                               .energy_j = r.Number(p, "energy_j", at),
                               .avg_power_w = r.Number(p, "avg_power_w", at),
                               .work = r.Number(p, "work", at)};
    if (phase.work > 0) phase.energy_per_unit_j = r.Number(p, "energy_per_unit_j", at);
    m.phases.push_back(std::move(phase));
  }
}

// series.csv summed over GPUs per sampling round (a round ends where the GPU index stops
// rising); samples without a power reading add nothing.
core::Status ReadSeries(const std::string& path, std::vector<Point>& power) {
  double last_gpu = -1;
  return core::ReadCsv(path, {"time_s", "gpu", "power_w"},
                       [&](const core::CsvRow& row) -> core::Status {
                         HEADROOM_ASSIGN_OR_RETURN(double t, row.Number(0));
                         HEADROOM_ASSIGN_OR_RETURN(double gpu, row.Number(1));
                         HEADROOM_ASSIGN_OR_RETURN(std::optional<double> w, row.OptionalNumber(2));
                         if (gpu <= last_gpu && !power.empty()) {
                           last_gpu = -1;
                         }
                         if (last_gpu < 0) power.emplace_back(t, 0);
                         if (w) power.back().second += *w;
                         last_gpu = gpu;
                         return core::Ok();
                       });
}

core::Status ReadSpans(const std::string& path, std::vector<PhaseSpan>& spans) {
  return core::ReadCsv(
      path, {"name", "start_s", "end_s"}, [&](const core::CsvRow& row) -> core::Status {
        HEADROOM_ASSIGN_OR_RETURN(double start, row.Number(1));
        HEADROOM_ASSIGN_OR_RETURN(double end, row.Number(2));
        spans.push_back({.name = std::string(row.Text(0)), .start_s = start, .end_s = end});
        return core::Ok();
      });
}

}  // namespace

std::string PhaseSpansCsv(const std::vector<PhaseSpan>& spans) {
  std::string out = "name,start_s,end_s\n";
  for (const PhaseSpan& s : spans) {
    out += fmt::format("{},{:.3f},{:.3f}\n", s.name, s.start_s, s.end_s);
  }
  return out;
}

core::Result<MeasureReport> ReadMeasureDir(const std::string& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return core::Fail(core::Error::NotFound(fmt::format("{}: no such directory", dir)));
  }
  const std::string path = fmt::format("{}/{}", dir, kMeasureSummaryFile);
  HEADROOM_ASSIGN_OR_RETURN(json j, format::ReadJsonObject(path));
  format::FieldReader r(path, kMeasureWriter);
  MeasureReport m;
  ReadSummary(r, j, m);
  if (r.error()) return core::Fail(*r.error());
  HEADROOM_RETURN_IF_ERROR(ReadSeries(fmt::format("{}/{}", dir, kSeriesFile), m.power));
  HEADROOM_RETURN_IF_ERROR(ReadSpans(fmt::format("{}/{}", dir, kPhasesFile), m.spans));
  return m;
}

std::string MeasureQuestion(const MeasureReport& m) {
  return fmt::format("How much energy and power did `{}` take on {} GPU{}{}?",
                     fmt::join(m.command, " "), m.gpus.size(), m.gpus.size() == 1 ? "" : "s",
                     m.phases.empty() ? "" : ", and in which phase");
}

std::string MeasureAnswer(const MeasureReport& m) {
  double peak = 0;
  for (const MeasureReport::Gpu& g : m.gpus) peak += g.peak_power_w;
  std::string out = fmt::format("{:.1f} J in {:.2f} s: {:.1f} W on average (peak {:.1f} W)",
                                m.energy_j, m.duration_s, m.avg_power_w, peak);
  std::vector<std::string> phases;
  for (const MeasureReport::Phase& p : m.phases) {
    phases.push_back(fmt::format("{} {:.0f} W", p.name, p.avg_power_w));
  }
  if (!phases.empty()) out += fmt::format("; {}", fmt::join(phases, ", "));
  if (m.work > 0)
    out += fmt::format("; {:g} {} at {:.4g} J each", m.work, m.unit, m.energy_j / m.work);
  if (!m.error.empty()) out += " (incomplete)";
  return out;
}

}  // namespace headroom::report
