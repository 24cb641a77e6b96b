// The MIG slice model's throughput scaling against MISO's measurements (data/validation/
// mig-training.csv: training jobs timed alone on each A100-40GB slice size). MISO publishes step
// times only, not the FLOPs, bytes or power the planner's workloads carry, so this checks the
// model's scaling law alone: each workload at each batch size is fitted on its smallest and
// largest measured slices (host time and per-sample time), and the slices in between are
// predicted; the share of the per-sample time that scales with SMs (the rest scales with memory
// slices) is one number fitted on named calibration workloads (`headroom model validate`).
// Thread-safe (no state).
#ifndef HEADROOM_CATALOG_MIG_SCALING_VALIDATION_H_
#define HEADROOM_CATALOG_MIG_SCALING_VALIDATION_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "mig/profile.h"
#include "model/gpu_spec.h"
#include "model/validation_result.h"

namespace headroom::catalog {

struct MigScalingMeasurement {
  std::string dataset;
  std::string workload;
  int batch = 0;
  std::string slice;  // profile class: "1g", "2g", "3g", "4g", "7g"
  double samples_per_s = 0;
  std::string source;
};

// mig-training.csv's format. Errors name file, line and field.
[[nodiscard]] core::Result<std::vector<MigScalingMeasurement>> ParseMigScalingMeasurements(
    std::string_view text, const std::string& source);
[[nodiscard]] core::Result<std::vector<MigScalingMeasurement>> EmbeddedMigScalingMeasurements();

// The calibration subset of the shipped rows: ResNet, the one MISO workload the MIG planner's own
// catalog also holds (data/workloads/); the other six are predicted.
inline const std::vector<std::string> kMigScalingCalibrationWorkloads = {"resnet"};

// The GPU the shipped rows were measured on (MISO: A100 40GB).
inline constexpr std::string_view kMigScalingGpu = "a100-40gb-sxm";

// Scores `rows` measured on `gpu` (with its MIG profiles `mig`). kInvalidArgument naming the row
// when a slice is not one of `mig`'s profile classes, or when no calibration row can be scored.
[[nodiscard]] core::Result<model::MigScalingCell> ValidateMigScaling(
    const model::GpuSpec& gpu, const mig::GpuMigSpec& mig,
    const std::vector<MigScalingMeasurement>& rows,
    const std::vector<std::string>& calibration_workloads, int worst);

}  // namespace headroom::catalog

#endif  // HEADROOM_CATALOG_MIG_SCALING_VALIDATION_H_
