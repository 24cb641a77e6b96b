// Setting::Label (characterize.h): compiled into headroom_sim_results, which report/ links to
// name a sweep's settings without linking the sweeps.
#include <string>

#include <fmt/format.h>

#include "sim/characterize.h"

namespace headroom::sim {

std::string Setting::Label() const {
  switch (kind) {
    case Kind::kDefault:
      return "default";
    case Kind::kClockLock:
      return fmt::format("sm_clock={:.0f}MHz", value);
    case Kind::kPowerLimit:
      return fmt::format("power_limit={:.0f}W", value);
  }
  return "?";
}

}  // namespace headroom::sim
