#include "report/measure_dir.h"

#include <filesystem>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/csv_reader.h"
#include "format/json_fields.h"

namespace headroom::report {
namespace {

using nlohmann::json;

constexpr const char* kMeasureWriter = "headroom measure --out";

using MG = MeasureReport::Gpu;
using MP = MeasureReport::Phase;
using MW = MeasureReport::Work;

constexpr auto kMeasuredGpuFields =
    std::tuple{format::Field("gpu", &MG::index),
               format::Field("uuid", &MG::uuid),
               format::Field("name", &MG::name),
               format::Field("energy_j", &MG::energy_j),
               format::Field("energy_source", &MG::energy_source),
               format::Field("energy_source_note", &MG::energy_source_note),
               format::Field("counter_energy_j", &MG::counter_energy_j),
               format::Field("integrated_energy_j", &MG::integrated_energy_j),
               format::Field("counter_vs_integration", &MG::counter_vs_integration),
               format::Field("counter_update_period_s", &MG::counter_update_period_s),
               format::Field("counter_update_period_is_upper_bound",
                             &MG::counter_update_period_is_upper_bound),
               format::Field("counter_resets", &MG::counter_resets),
               format::Field("power_reading", &MG::power_reading),
               format::Field("duration_s", &MG::duration_s),
               format::Field("avg_power_w", &MG::avg_power_w),
               format::Field("peak_power_w", &MG::peak_power_w),
               format::Field("time_power_capped_s", &MG::capped_s),
               format::Field("time_throttled_s", &MG::throttled_s),
               format::Field("samples", &MG::samples),
               format::Field("driver_power_samples", &MG::driver_power_samples)};

constexpr auto kMeasureWorkFields =
    std::tuple{format::Field("units", &MW::units), format::Field("unit", &MW::unit),
               format::Field("throughput_per_s", &MW::throughput_per_s),
               format::Field("energy_per_unit_j", &MW::energy_per_unit_j)};

constexpr auto kMeasurePhaseFields =
    std::tuple{format::Field("name", &MP::name),
               format::Field("duration_s", &MP::duration_s),
               format::Field("energy_j", &MP::energy_j),
               format::Field("avg_power_w", &MP::avg_power_w),
               format::Field("work", &MP::work),
               format::Field("energy_per_unit_j", &MP::energy_per_unit_j)};

bool Complete(const MeasureReport& m) { return !m.error; }

constexpr auto kMeasureSummaryFields = std::tuple{
    format::Field("command", &MeasureReport::command),
    format::Field("exit_code", &MeasureReport::exit_code, {.is_signed = true}),
    format::Field("backend", &MeasureReport::backend),
    format::Computed<MeasureReport>("complete", &Complete),
    format::Field("error", &MeasureReport::error),
    format::Field("duration_s", &MeasureReport::duration_s),
    format::Field("gpus", &MeasureReport::gpus, kMeasuredGpuFields),
    format::Group<MeasureReport>(
        "total", std::tuple{format::Field("energy_j", &MeasureReport::energy_j),
                            format::Field("avg_power_w", &MeasureReport::avg_power_w),
                            format::Field("peak_power_sum_w", &MeasureReport::peak_power_sum_w)}),
    format::Field("work", &MeasureReport::work, kMeasureWorkFields),
    format::Field("phases", &MeasureReport::phases, kMeasurePhaseFields)};

// What `measure --out` adds to the summary: MeasureInputsJson writes it, ReadMeasureDir reads it.
constexpr auto kMeasureInputsFields = std::tuple{format::Group<MeasureReport>(
    "inputs", std::tuple{format::Field("interval", &MeasureReport::interval),
                         format::Field("version", &MeasureReport::version)})};

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

nlohmann::ordered_json MeasureReportJson(const MeasureReport& report) {
  return format::TableJson(report, kMeasureSummaryFields);
}

nlohmann::ordered_json MeasureInputsJson(const std::string& interval, const std::string& version) {
  MeasureReport inputs;
  inputs.interval = interval;
  inputs.version = version;
  return format::TableJson(inputs, kMeasureInputsFields);
}

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
  format::ReadFields(r, j, "", m, kMeasureSummaryFields);
  format::ReadFields(r, j, "", m, kMeasureInputsFields);
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
  if (m.work && m.work->units > 0) {
    out += fmt::format("; {:g} {} at {:.4g} J each", m.work->units, m.work->unit,
                       m.energy_j / m.work->units);
  }
  if (m.error) out += " (incomplete)";
  return out;
}

}  // namespace headroom::report
