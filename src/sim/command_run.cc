#include "sim/command_run.h"

namespace headroom::sim {

std::optional<size_t> BestCommandRun(const std::vector<CommandRun>& runs, double slo_fraction) {
  std::optional<size_t> best;
  for (size_t i = 0; i < runs.size(); ++i) {
    const double slow = runs[i].duration_s / runs.front().duration_s - 1;
    if (slow <= slo_fraction + 1e-9 && (!best || runs[i].peak_w < runs[*best].peak_w)) best = i;
  }
  return best;
}

}  // namespace headroom::sim
