// The MIG characterization on a device (sim/mig_device_sweep.h) as headroom prints and keeps it:
// results.csv (one row per instance), the --json object and the text table. Pure except
// WriteMigDeviceSweepDir; thread-compatible.
#ifndef HEADROOM_REPORT_MIG_DEVICE_SWEEP_REPORT_H_
#define HEADROOM_REPORT_MIG_DEVICE_SWEEP_REPORT_H_

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/result.h"
#include "format/text_style.h"
#include "mig/device_sweep.h"

namespace headroom::report {

// What the sweep was run on and with, for the headings.
struct MigDeviceSweepContext {
  int gpu_index = 0;
  std::string gpu = {};                // the MIG catalog's name
  std::string backend = {};            // "nvml" or "sim"
  std::optional<double> samples = {};  // work each copy did, for J/sample
};

// results.csv's text: a header, then one row per instance of every layout.
std::string MigDeviceSweepCsv(const mig::DeviceSweep& sweep, std::optional<double> samples);

// Creates `dir` if needed and writes DIR/results.csv.
[[nodiscard]] core::Status WriteMigDeviceSweepDir(const std::string& dir,
                                                  const mig::DeviceSweep& sweep,
                                                  std::optional<double> samples);

// What `mig characterize --json -- COMMAND` prints.
nlohmann::ordered_json MigDeviceSweepJson(const mig::DeviceSweep& sweep,
                                          const MigDeviceSweepContext& context);

// The heading, one table row per instance, and the closing line naming the restored layout (and
// DIR/results.csv when `out_dir` is not empty).
std::string MigDeviceSweepText(const mig::DeviceSweep& sweep, const MigDeviceSweepContext& context,
                               const std::string& out_dir, const format::TextStyle& style);

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_MIG_DEVICE_SWEEP_REPORT_H_
