// What `headroom model dvfs` prints: the clock and power-limit sweeps of the reference prefill and
// decode phases (model/dvfs_sweep.h) and the burst under a cap against a clock lock
// (gpu/sim/burst_probe.h), as JSON or as tables and a sentence. Pure functions.
#ifndef HEADROOM_REPORT_DVFS_REPORT_H_
#define HEADROOM_REPORT_DVFS_REPORT_H_

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "format/text_style.h"
#include "gpu/sim/burst_probe.h"
#include "model/dvfs_sweep.h"

namespace headroom::report {

struct DvfsCharacterization {
  const model::GpuSpec* gpu = nullptr;
  std::vector<model::SweepRow> clock_rows = {};
  std::vector<model::SweepRow> limit_rows = {};
  gpu::sim::CapVersusLock burst = {};
};

nlohmann::ordered_json DvfsJson(const DvfsCharacterization& c);
std::string DvfsText(const DvfsCharacterization& c,
                     const format::TextStyle& style = format::TextStyle());

}  // namespace headroom::report

#endif  // HEADROOM_REPORT_DVFS_REPORT_H_
