// One run of `characterize -- CMD` under one setting, as it is kept, written and read back, and
// the verdict over a sweep of them. Pure: the sweep that measures them is app/command_sweep.h.
#ifndef HEADROOM_SIM_COMMAND_RUN_H_
#define HEADROOM_SIM_COMMAND_RUN_H_

#include <cstddef>
#include <optional>
#include <vector>

#include "sim/characterize.h"

namespace headroom::sim {

// One run of the command under one setting.
struct CommandRun {
  Setting setting = {};
  int exit_code = 0;
  double duration_s = 0, energy_j = 0, peak_w = 0, mean_w = 0, p99_w = 0, capped_s = 0, work = 0;
};

// The run with the lowest peak whose duration stays within `slo_fraction` of the first run's
// (the default setting); nullopt when none does.
std::optional<size_t> BestCommandRun(const std::vector<CommandRun>& runs, double slo_fraction);

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_COMMAND_RUN_H_
