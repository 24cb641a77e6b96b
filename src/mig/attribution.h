// Attribution of whole-GPU energy to MIG instances. No GPU reports power per MIG instance (brief
// section 4), so the energy measured (or modeled) for the whole GPU over a window is split by a
// stated method; the simulator and the real-GPU characterization call this same function.
//   SM share:          all energy by each instance's share of the instances' SMs.
//   Activity-weighted: idle power x window by SM share (idle partitions still draw static
//                      power); the energy above idle by SMs x busy seconds, so an instance whose
//                      job ran half the window with the same SMs gets half the dynamic share.
// Energy an instance without a job would get stays unattributed. Pure; thread-safe.
#ifndef HEADROOM_MIG_ATTRIBUTION_H_
#define HEADROOM_MIG_ATTRIBUTION_H_

#include <span>
#include <vector>

namespace headroom::mig {

struct InstanceUse {
  int sm_count = 0;
  // Seconds of the window a job kept the instance busy: the simulator's modeled kernel time, or
  // on a real GPU the time the instance's command ran.
  double busy_s = 0;
  bool has_job = false;
};

struct EnergyShares {
  std::vector<double> sm_share_j;  // per instance
  std::vector<double> activity_j;  // per instance
  double unattributed_sm_share_j = 0;
  double unattributed_activity_j = 0;
};

// REQUIRES: total_j >= 0, idle_w >= 0, window_s >= 0. Energy above idle below zero (a noisy
// measurement) counts as zero dynamic energy.
EnergyShares AttributeEnergy(double total_j, double idle_w, double window_s,
                             std::span<const InstanceUse> instances);

}  // namespace headroom::mig

#endif  // HEADROOM_MIG_ATTRIBUTION_H_
