// What `headroom characterize` does below its flags: the simulated sweep of SM clock locks and
// power limits over a workload's shapes on a catalog GPU with its engine's calibration (its
// --out directory and report), or, with a command after --, that command run under each setting
// on a backend's GPUs (app/command_sweep.h), and the best setting under the latency SLO.
#ifndef HEADROOM_APP_CHARACTERIZE_H_
#define HEADROOM_APP_CHARACTERIZE_H_

#include <atomic>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app/context.h"
#include "core/result.h"
#include "report/characterize_dir.h"
#include "sim/characterize.h"
#include "sim/command_run.h"

namespace headroom::app {

// Where `characterize --report` writes when no --out is given.
inline constexpr const char* kDefaultCharacterizeDir = "headroom-characterize";

struct CharacterizeRequest {
  std::string catalog_dir = {};  // empty: the built-in catalog
  std::string workload = "inference";
  std::string model = "llama2-70b";
  std::string gpu = "a100-80gb-sxm";
  int tp = 8;
  std::string sm_clocks = {};     // "START:STOP:STEP" or a list, MHz
  std::string power_limits = {};  // the same, W
  std::string prompts = "256,1024,8192";
  std::string batches = "1,8";
  int output = 128;
  int iterations = 5;
  std::string out = {};  // empty: nothing written (kDefaultCharacterizeDir with report)
  std::string slo = "5%";
  std::string interval = "10ms";
  EngineOptions engine = {};
  bool report = false;
  std::string version = {};               // summary.json's
  BackendOptions backend = {};            // command mode only
  std::vector<std::string> command = {};  // non-empty: run it under each setting
  const std::atomic<bool>* stop = nullptr;
  std::function<void(const std::string&)> note = {};        // the command sweep's progress
  std::function<void(const std::string&)> on_warning = {};  // a plot, a measured run
};

struct CharacterizeResult {
  double slo_percent = 0;
  nlohmann::ordered_json summary = {};  // summary.json (what --json prints)
  // The simulated sweep:
  std::optional<sim::SimulatedSweep> sweep = {};
  report::CharacterizeInputs inputs = {};
  std::string out_dir = {};                // where it was written; empty: nowhere
  std::optional<std::string> report = {};  // report.html's path
  // The command's sweep:
  std::vector<sim::CommandRun> runs = {};
  std::optional<std::size_t> best = {};
};

// Errors name the flag for bad input; kPermissionDenied for a command's sweep on NVML without
// root; the sweeps' and writers' errors.
[[nodiscard]] core::Result<CharacterizeResult> Characterize(const CharacterizeRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_CHARACTERIZE_H_
