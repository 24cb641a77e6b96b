#include "mig/attribution.h"

#include <algorithm>

namespace headroom::mig {

EnergyShares AttributeEnergy(double total_j, double idle_w, double window_s,
                             std::span<const InstanceUse> instances) {
  EnergyShares out;
  out.sm_share_j.assign(instances.size(), 0.0);
  out.activity_j.assign(instances.size(), 0.0);
  double sms = 0, weight = 0;
  for (const InstanceUse& u : instances) {
    sms += u.sm_count;
    if (u.has_job) weight += u.sm_count * u.busy_s;
  }
  const double static_j = std::min(total_j, idle_w * window_s);
  const double dynamic_j = total_j - static_j;
  if (sms <= 0) {
    out.unattributed_sm_share_j = out.unattributed_activity_j = total_j;
    return out;
  }
  for (size_t i = 0; i < instances.size(); ++i) {
    const InstanceUse& u = instances[i];
    const double share = u.sm_count / sms;
    if (!u.has_job) {
      out.unattributed_sm_share_j += total_j * share;
      out.unattributed_activity_j += static_j * share;
      continue;
    }
    out.sm_share_j[i] = total_j * share;
    out.activity_j[i] =
        static_j * share + (weight > 0 ? dynamic_j * u.sm_count * u.busy_s / weight : 0);
  }
  if (weight <= 0) out.unattributed_activity_j += dynamic_j;
  return out;
}

}  // namespace headroom::mig
