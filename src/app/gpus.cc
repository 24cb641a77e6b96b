#include "app/gpus.h"

#include "telemetry/prometheus_text.h"

namespace headroom::app {

core::Result<GpusResult> ListGpus(const GpusRequest& request) {
  core::SystemClock clock;
  HEADROOM_ASSIGN_OR_RETURN(DeviceSet set,
                            OpenDevices(request.catalog_dir, request.backend, &clock));
  GpusResult result{.backend = set.backend, .listings = {}};
  for (auto& device : set.devices) {
    HEADROOM_ASSIGN_OR_RETURN(gpu::GpuListing listing, gpu::ReadListing(*device, clock.Now()));
    result.listings.push_back(std::move(listing));
  }
  if (request.prometheus) result.prometheus = telemetry::GpuMetricsText(result.listings);
  return result;
}

}  // namespace headroom::app
