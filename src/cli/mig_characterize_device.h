// `headroom mig characterize -- COMMAND` on a real (or simulated) GPU: opens the one GPU, runs
// the sweep (sim/mig_device_sweep.h) and prints or writes what it measured
// (report/mig_device_sweep_report.h). Not thread-safe (CLI).
#ifndef HEADROOM_CLI_MIG_CHARACTERIZE_DEVICE_H_
#define HEADROOM_CLI_MIG_CHARACTERIZE_DEVICE_H_

#include <optional>
#include <string>
#include <vector>

#include "cli/common.h"

namespace headroom::cli {

struct MigDeviceSweepOptions {
  BackendOptions backend;
  std::vector<std::string> layouts;  // empty: 7g, 2 x 3g, 3 x 2g, 7 x 1g
  std::vector<std::string> command;
  std::optional<double> samples;  // work each copy does, for J/sample
  double idle_s = 3;              // idle window measured before the sweep
  bool enable_mig = false;        // turn MIG mode on for the sweep (and off after) if it is off
  std::string out;
  bool json = false;
};

int RunMigCharacterizeOnDevice(const GlobalOptions& global, const MigDeviceSweepOptions& o);

}  // namespace headroom::cli

#endif  // HEADROOM_CLI_MIG_CHARACTERIZE_DEVICE_H_
