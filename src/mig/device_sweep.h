// What the MIG characterization on a device (`mig characterize -- COMMAND`, app/mig_device_sweep.h)
// measured, as it is kept, written and read back: per layout the window and whole-GPU energy, per
// instance its copy's time and attributed energy.
#ifndef HEADROOM_MIG_DEVICE_SWEEP_H_
#define HEADROOM_MIG_DEVICE_SWEEP_H_

#include <string>
#include <vector>

namespace headroom::mig {

// One copy of the command on one MIG instance.
struct InstanceRun {
  std::string layout = {};
  std::string slice = {};  // "3g.40gb@4"
  std::string uuid = {};   // the MIG device UUID the copy saw
  int sm_count = 0;
  int exit_code = 0;  // 128 + signal when killed
  double seconds = 0;
  double energy_activity_j = 0;  // idle by SM share, the rest by SMs x run time
  double energy_sm_share_j = 0;
};

struct LayoutRun {
  std::string layout = {};
  double window_s = 0;  // from the first copy's start until the last one ended
  double energy_j = 0;  // whole GPU, over the window
  std::vector<InstanceRun> instances = {};
};

struct DeviceSweep {
  double idle_w = 0;
  std::string original_layout = {};  // restored at the end
  std::vector<LayoutRun> runs = {};

  // Whether any copy exited non-zero.
  bool AnyCopyFailed() const;
};

}  // namespace headroom::mig

#endif  // HEADROOM_MIG_DEVICE_SWEEP_H_
