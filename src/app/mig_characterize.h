// What `headroom mig characterize` does below its flags: every MIG layout x training workload on
// the slice model (app/mig_model_sweep.h) with its directory, plots and report; or, with a
// command after --, that command on every instance of each layout of one GPU
// (app/mig_device_sweep.h) and its directory.
#ifndef HEADROOM_APP_MIG_CHARACTERIZE_H_
#define HEADROOM_APP_MIG_CHARACTERIZE_H_

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "app/context.h"
#include "app/mig_model_sweep.h"
#include "core/result.h"
#include "mig/device_sweep.h"
#include "report/mig_device_sweep_report.h"

namespace headroom::app {

struct MigCharacterizeRequest {
  std::string catalog_dir = {};  // empty: the built-in catalog
  std::string gpu = "h200";
  std::string workloads = "all";
  std::string profiles = "1g,2g,3g,4g,7g";
  std::vector<std::string> layouts = {};  // empty: one per multiset of maximal layouts, plus
                                          // MIG off (with a command: 7g, 2 x 3g, 3 x 2g, 7 x 1g)
  std::optional<double> power_limit_w = {};
  std::string out = "mig-characterize";
  bool report = false;       // also report.html in out (the model sweep only)
  std::string version = {};  // mig-characterize.json's
  // With a command: the sweep on one GPU of a backend instead of the model.
  BackendOptions backend = {};
  std::vector<std::string> command = {};
  std::optional<double> samples = {};  // work each copy does, for J/sample
  double idle_s = 3;                   // idle window measured before the sweep
  bool enable_mig = false;  // turn MIG mode on for the sweep (and off after) if it is off
  const std::atomic<bool>* stop = nullptr;
  std::function<void(double fraction, const std::string& workload)> progress = {};  // the model's
  std::function<void(const std::string& layout)> on_layout = {};  // the device's, before each
  std::function<void(const std::string&)> on_warning = {};        // a plot not rendered
  std::function<void(const std::string&)> on_error = {};          // a restore that failed meanwhile
};

struct MigCharacterizeResult {
  // The model sweep:
  std::optional<MigModelSweep> model = {};
  std::optional<std::string> report = {};  // report.html's path
  // The sweep on a device:
  std::optional<mig::DeviceSweep> device = {};
  report::MigDeviceSweepContext context = {};
};

// Errors name the flag for bad input; the sweeps' and writers' errors.
[[nodiscard]] core::Result<MigCharacterizeResult> MigCharacterize(
    const MigCharacterizeRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_MIG_CHARACTERIZE_H_
