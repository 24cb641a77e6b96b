// GPU telemetry in the Prometheus text exposition format (version 0.0.4): conventional names in
// base units (headroom_gpu_power_watts, headroom_gpu_energy_joules_total,
// headroom_gpu_sm_clock_hertz, ...), each sample labelled gpu, uuid and name. Readings a GPU
// lacks are left out, not written as zero. Pure function.
#ifndef HEADROOM_REPORT_PROMETHEUS_TEXT_H_
#define HEADROOM_REPORT_PROMETHEUS_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

#include "report/device_report.h"

namespace headroom::report {

std::string PrometheusText(const std::vector<GpuListing>& gpus);

// A label value with backslash, double quote and newline escaped as the format requires.
std::string EscapeLabelValue(std::string_view value);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_PROMETHEUS_TEXT_H_
