#include "mig/device_sweep.h"

namespace headroom::mig {

bool DeviceSweep::AnyCopyFailed() const {
  for (const LayoutRun& run : runs) {
    for (const InstanceRun& r : run.instances) {
      if (r.exit_code != 0) return true;
    }
  }
  return false;
}

}  // namespace headroom::mig
