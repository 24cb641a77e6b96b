// The Prometheus text exposition format (version 0.0.4), written in one place for the agent's
// and the controller's /metrics and `headroom gpus --prometheus`: PrometheusWriter (families with
// their HELP and TYPE lines, samples with escaped labels) and the GPU telemetry families
// (conventional names in base units: headroom_gpu_power_watts, headroom_gpu_energy_joules_total,
// headroom_gpu_sm_clock_hertz, ...; each sample labelled gpu, uuid and name; readings a GPU lacks
// are left out, not written as zero). Pure; PrometheusWriter is thread-compatible.
#ifndef HEADROOM_TELEMETRY_PROMETHEUS_TEXT_H_
#define HEADROOM_TELEMETRY_PROMETHEUS_TEXT_H_

#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpu/listing.h"

namespace headroom::telemetry {

// A label value with backslash, double quote and newline escaped as the format requires.
std::string EscapeLabelValue(std::string_view value);

class PrometheusWriter {
 public:
  using Labels = std::initializer_list<std::pair<std::string_view, std::string>>;

  // Begins a family; its HELP and TYPE lines are written with its first sample, so a family
  // without samples leaves nothing. type: "gauge" or "counter".
  void Family(std::string_view name, std::string_view type, std::string_view help);
  // One sample of the family begun last.
  void Sample(double value, Labels labels = {});
  // The same with labels built at run time.
  void Sample(double value, const std::vector<std::pair<std::string, std::string>>& labels);

  const std::string& text() const { return out_; }

 private:
  void Line(std::string_view labels, double value);

  std::string out_;
  std::string name_;
  std::string header_;  // the current family's HELP and TYPE, until its first sample
};

// The GPU telemetry families of `gpus`, appended to `out`.
void WriteGpuMetrics(const std::vector<gpu::GpuListing>& gpus, PrometheusWriter& out);
// The same as a whole exposition (`headroom gpus --prometheus`).
std::string GpuMetricsText(const std::vector<gpu::GpuListing>& gpus);

}  // namespace headroom::telemetry

#endif  // HEADROOM_TELEMETRY_PROMETHEUS_TEXT_H_
