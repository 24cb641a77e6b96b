// What `headroom model dvfs` does below its flags: the calibrated power model of one catalogued
// GPU type swept across SM clocks and power limits (prefill-like and decode-like work), and a
// simulated prefill burst under a power cap against the same burst under a clock lock.
// Thread-compatible.
#ifndef HEADROOM_APP_MODEL_DVFS_H_
#define HEADROOM_APP_MODEL_DVFS_H_

#include <memory>
#include <string>

#include "core/result.h"
#include "model/gpu_spec.h"
#include "report/dvfs_report.h"

namespace headroom::app {

struct ModelDvfsRequest {
  std::string catalog_dir = {};   // empty: the built-in catalog
  std::string gpu = {};           // as --gpu
  std::string sm_clocks = {};     // as --sm-clocks; empty: 60-100% of the maximum clock
  std::string power_limits = {};  // as --power-limits; empty: the settable range
};

struct ModelDvfsResult {
  // Owned here so that characterization.gpu, which points to it, survives a move.
  std::unique_ptr<const model::GpuSpec> gpu;
  report::DvfsCharacterization characterization;
};

// Errors name the flag (--gpu, --sm-clocks, --power-limits).
[[nodiscard]] core::Result<ModelDvfsResult> ModelDvfs(const ModelDvfsRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_MODEL_DVFS_H_
