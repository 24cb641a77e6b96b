#include "report/device_report.h"

#include <cmath>
#include <type_traits>

#include <fmt/format.h>

#include "core/parse.h"

namespace headroom::report {
namespace {

using ordered_json = nlohmann::ordered_json;

// Readings carry no more than milli-unit precision; longer decimals are noise in a log.
double Round3(double x) { return std::round(x * 1000.0) / 1000.0; }

template <class T, class F>
ordered_json OrNull(const std::optional<T>& value, F&& get) {
  if (!value) return ordered_json(nullptr);
  const auto v = get(*value);
  if constexpr (std::is_floating_point_v<decltype(v)>) {
    return ordered_json(Round3(v));
  } else {
    return ordered_json(v);
  }
}

// A number with `decimals` decimals, or "-" when absent.
template <class T, class F>
std::string Cell(const std::optional<T>& value, F&& get, int decimals = 0) {
  return value ? fmt::format("{:.{}f}", static_cast<double>(get(*value)), decimals) : "-";
}

std::string CsvCell(const ordered_json& value) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  return value.dump();
}

double Gib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024 * 1024); }

const std::vector<format::TextTable::Column> kMonitorColumns = {
    {"TIME s"},
    {"GPU"},
    {"POWER W"},
    {"AVG W"},
    {"ENERGY J"},
    {"SM MHz"},
    {"UTIL %"},
    {"MEM %"},
    {"TEMP C"},
    {"LIMIT W"},
    {"THROTTLE", format::TextTable::Align::kLeft}};

ordered_json MonitorJson(const MonitorRow& row) {
  const gpu::DeviceSnapshot& s = row.snapshot;
  auto w = [](core::Watts x) { return x.value(); };
  auto mhz = [](core::Megahertz x) { return x.value(); };
  return ordered_json{
      {"time_s", Round3(row.time_s)},
      {"gpu", row.gpu},
      {"power_w", OrNull(s.power_instant, w)},
      {"power_avg_w", OrNull(s.power_average, w)},
      {"energy_j", OrNull(row.energy_since_start, [](core::Joules j) { return j.value(); })},
      {"sm_clock_mhz", OrNull(s.sm_clock, mhz)},
      {"mem_clock_mhz", OrNull(s.memory_clock, mhz)},
      {"gpu_util_pct", OrNull(s.utilization, [](auto u) { return u.gpu_percent; })},
      {"mem_util_pct", OrNull(s.utilization, [](auto u) { return u.memory_percent; })},
      {"temperature_c", OrNull(s.temperature, [](core::Celsius c) { return c.value(); })},
      {"memory_used_bytes", OrNull(s.memory, [](auto m) { return m.used_bytes; })},
      {"power_limit_w", OrNull(s.power_limits, [](auto l) { return l.enforced.value(); })},
      {"throttle", OrNull(s.throttle_reasons, gpu::ThrottleReasonNames)},
  };
}

}  // namespace

nlohmann::ordered_json GpuListingJson(const gpu::GpuListing& g) {
  const gpu::DeviceSnapshot& s = g.snapshot;
  auto w = [](core::Watts x) { return x.value(); };
  auto mhz = [](core::Megahertz x) { return x.value(); };
  ordered_json lock = nullptr;
  if (g.clock_lock)
    lock = ordered_json{{"min_mhz", g.clock_lock->min.value()},
                        {"max_mhz", g.clock_lock->max.value()}};
  return ordered_json{
      {"index", g.info.index},
      {"name", g.info.name},
      {"uuid", g.info.uuid},
      {"pci_bus_id", g.info.pci_bus_id},
      {"catalog_type", OrNull(g.info.catalog_type, [](const std::string& t) { return t; })},
      {"tdp_w", OrNull(s.power_limits, [](auto l) { return l.default_limit.value(); })},
      {"power_limit_w", OrNull(s.power_limits, [](auto l) { return l.enforced.value(); })},
      {"power_limit_requested_w",
       OrNull(s.power_limits, [](auto l) { return l.requested.value(); })},
      {"power_limit_min_w", OrNull(s.power_limits, [](auto l) { return l.min.value(); })},
      {"power_limit_max_w", OrNull(s.power_limits, [](auto l) { return l.max.value(); })},
      {"power_w", OrNull(s.power_instant, w)},
      {"power_avg_w", OrNull(s.power_average, w)},
      {"sm_clock_mhz", OrNull(s.sm_clock, mhz)},
      {"sm_clock_min_mhz", OrNull(g.sm_clock_min, mhz)},
      {"sm_clock_max_mhz", OrNull(g.info.sm_clock_max, mhz)},
      {"sm_clock_lock", lock},
      {"memory_clock_mhz", OrNull(s.memory_clock, mhz)},
      {"memory_total_bytes", OrNull(g.info.memory_total_bytes, [](std::uint64_t b) { return b; })},
      {"memory_used_bytes", OrNull(s.memory, [](auto m) { return m.used_bytes; })},
      {"temperature_c", OrNull(s.temperature, [](core::Celsius c) { return c.value(); })},
      {"throttle", OrNull(s.throttle_reasons, gpu::ThrottleReasonNames)},
  };
}

std::string GpuListingTable(const std::vector<gpu::GpuListing>& gpus,
                            const format::TextStyle& style) {
  using Align = format::TextTable::Align;
  format::TextTable table({{"GPU"},
                           {"NAME", Align::kLeft},
                           {"TYPE", Align::kLeft},
                           {"POWER W"},
                           {"LIMIT W"},
                           {"RANGE W", Align::kLeft},
                           {"SM MHz"},
                           {"MAX MHz"},
                           {"LOCK MHz", Align::kLeft},
                           {"MEMORY GiB"},
                           {"UUID", Align::kLeft}});
  for (const gpu::GpuListing& g : gpus) {
    const gpu::DeviceSnapshot& s = g.snapshot;
    const std::string range =
        s.power_limits
            ? fmt::format("{:.0f}-{:.0f}", s.power_limits->min.value(), s.power_limits->max.value())
            : "-";
    const std::string lock = g.clock_lock ? fmt::format("{:.0f}-{:.0f}", g.clock_lock->min.value(),
                                                        g.clock_lock->max.value())
                                          : "none";
    table.AddRow({std::to_string(g.info.index), g.info.name, g.info.catalog_type.value_or("-"),
                  Cell(s.power_instant, [](core::Watts x) { return x.value(); }),
                  Cell(s.power_limits, [](auto l) { return l.enforced.value(); }), range,
                  Cell(s.sm_clock, [](core::Megahertz x) { return x.value(); }),
                  Cell(g.info.sm_clock_max, [](core::Megahertz x) { return x.value(); }), lock,
                  Cell(g.info.memory_total_bytes, Gib, 1), g.info.uuid});
  }
  return table.Render(style);
}

core::Result<MonitorFormat> ParseMonitorFormat(std::string_view text) {
  if (text == "table") return MonitorFormat::kTable;
  if (text == "csv") return MonitorFormat::kCsv;
  if (text == "jsonl") return MonitorFormat::kJsonl;
  return core::Fail(core::Error::InvalidArgument(
      fmt::format("--format '{}' is not one of table, csv, jsonl", text)));
}

MonitorWriter::MonitorWriter(MonitorFormat format, std::ostream& out)
    : format_(format), out_(out), table_(kMonitorColumns) {
  // Fixed widths so rows line up as they stream, without knowing later values.
  widths_ = {8, 3, 7, 7, 9, 6, 6, 5, 6, 7, 8};
}

void MonitorWriter::Write(const MonitorRow& row) {
  const ordered_json j = MonitorJson(row);
  switch (format_) {
    case MonitorFormat::kJsonl:
      out_ << j.dump() << "\n";
      break;
    case MonitorFormat::kCsv: {
      if (!header_written_) {
        std::string header;
        for (const auto& [key, value] : j.items()) header += (header.empty() ? "" : ",") + key;
        out_ << header << "\n";
      }
      std::string line;
      bool first = true;
      for (const auto& [key, value] : j.items()) {
        line += (first ? "" : ",") + CsvCell(value);
        first = false;
      }
      out_ << line << "\n";
      break;
    }
    case MonitorFormat::kTable: {
      if (!header_written_) out_ << table_.RenderHeader(widths_);
      const gpu::DeviceSnapshot& s = row.snapshot;
      out_ << table_.RenderRow(
          {fmt::format("{:.3f}", row.time_s), std::to_string(row.gpu),
           Cell(
               s.power_instant, [](core::Watts x) { return x.value(); }, 1),
           Cell(
               s.power_average, [](core::Watts x) { return x.value(); }, 1),
           Cell(
               row.energy_since_start, [](core::Joules x) { return x.value(); }, 1),
           Cell(s.sm_clock, [](core::Megahertz x) { return x.value(); }),
           Cell(s.utilization, [](auto u) { return u.gpu_percent; }),
           Cell(s.utilization, [](auto u) { return u.memory_percent; }),
           Cell(s.temperature, [](core::Celsius c) { return c.value(); }),
           Cell(s.power_limits, [](auto l) { return l.enforced.value(); }),
           s.throttle_reasons ? gpu::ThrottleReasonNames(*s.throttle_reasons) : "-"},
          widths_);
      break;
    }
  }
  header_written_ = true;
  out_.flush();
}

}  // namespace headroom::report
