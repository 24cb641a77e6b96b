// What `headroom gpus` does below its flags: each selected GPU's listing (identity, a telemetry
// snapshot, clock lock and range) read through the Device, and, for --prometheus, the same as a
// Prometheus text exposition. Not thread-safe (opens the backend's devices).
#ifndef HEADROOM_APP_GPUS_H_
#define HEADROOM_APP_GPUS_H_

#include <string>
#include <vector>

#include "app/context.h"
#include "core/result.h"
#include "gpu/listing.h"

namespace headroom::app {

struct GpusRequest {
  std::string catalog_dir = {};  // empty: the built-in catalog
  BackendOptions backend = {};
  bool prometheus = false;  // also render GpusResult::prometheus
};

struct GpusResult {
  std::string backend;
  std::vector<gpu::GpuListing> listings;  // in the backend's order
  std::string prometheus = {};            // the exposition, when asked for
};

// The backend's errors; the first GPU that cannot be read stops the listing with its error.
[[nodiscard]] core::Result<GpusResult> ListGpus(const GpusRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_GPUS_H_
