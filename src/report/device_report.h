// Formatting of GPU listings (`headroom gpus`) and telemetry rows (`headroom monitor`) as
// aligned text, CSV and JSON. Reads result structs only. MonitorWriter is thread-compatible.
#ifndef HEADROOM_REPORT_DEVICE_REPORT_H_
#define HEADROOM_REPORT_DEVICE_REPORT_H_

#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "format/table.h"
#include "gpu/device.h"
#include "gpu/listing.h"
#include "gpu/snapshot.h"
#include "telemetry/monitor.h"

namespace headroom::report {

nlohmann::ordered_json GpuListingJson(const gpu::GpuListing& gpu);
std::string GpuListingTable(const std::vector<gpu::GpuListing>& gpus,
                            const format::TextStyle& style = format::TextStyle());

enum class MonitorFormat { kTable, kCsv, kJsonl };
[[nodiscard]] core::Result<MonitorFormat> ParseMonitorFormat(std::string_view text);

using MonitorRow = telemetry::MonitorSample;

// Streams rows as they come: the table and CSV headers once, then one line per row.
class MonitorWriter {
 public:
  MonitorWriter(MonitorFormat format, std::ostream& out);
  void Write(const MonitorRow& row);

 private:
  MonitorFormat format_;
  std::ostream& out_;
  format::TextTable table_;
  std::vector<size_t> widths_;
  bool header_written_ = false;
};

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_DEVICE_REPORT_H_
