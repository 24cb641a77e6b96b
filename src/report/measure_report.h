// The result of `headroom measure` (energy, power and throttling per GPU and in total, per phase,
// per unit of work) and its JSON and text forms. Reads result structs only. Pure functions.
#ifndef HEADROOM_REPORT_MEASURE_REPORT_H_
#define HEADROOM_REPORT_MEASURE_REPORT_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "format/text_style.h"
#include "gpu/device.h"
#include "telemetry/energy_meter.h"

namespace headroom::report {

struct MeasuredGpu {
  gpu::DeviceInfo info;
  telemetry::EnergyReport energy;
  std::vector<telemetry::PhaseEnergy> phases;
};

struct MeasureSummary {
  std::vector<std::string> command;
  int exit_code = 0;
  std::string backend;
  double duration_s = 0;
  std::vector<MeasuredGpu> gpus;
  double work = 0;  // 0: no work reported
  std::string unit = "units";
  std::vector<std::pair<std::string, double>> work_by_phase;
  std::optional<std::string> error;  // why the measurement ended early
};

nlohmann::ordered_json MeasureJson(const MeasureSummary& summary);
std::string MeasureText(const MeasureSummary& summary,
                        const format::TextStyle& style = format::TextStyle());

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MEASURE_REPORT_H_
