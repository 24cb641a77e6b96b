// What `headroom mig characterize` does on the slice model below its flags: the sweep of every
// layout x workload (mig::CharacterizeSweep), kept as report/mig_characterize_report.h keeps it,
// its directory written, and the equal-instance plots (throughput and energy against the number
// of instances) rendered beside results.csv. Thread-compatible.
#ifndef HEADROOM_APP_MIG_MODEL_SWEEP_H_
#define HEADROOM_APP_MIG_MODEL_SWEEP_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/result.h"
#include "mig/layout.h"
#include "mig/slice_model.h"
#include "mig/training_workload.h"
#include "report/mig_characterize_report.h"

namespace headroom::app {

struct MigModelSweepRequest {
  const mig::SliceModel* model = nullptr;
  std::vector<mig::MeasuredWorkload> workloads = {};
  std::vector<mig::WorkloadFit> fits = {};               // fits[i] is workloads[i]'s
  std::vector<std::optional<mig::Layout>> layouts = {};  // nullopt: MIG off
  std::string out_dir = {};
  std::string version = {};  // mig-characterize.json's
  std::function<void(double fraction, const std::string& workload)> progress = {};
  std::function<void(const std::string&)> on_warning = {};  // a plot gnuplot could not render
};

struct MigModelSweep {
  report::MigCharacterizeReport report;
  bool plotted = false;  // the equal-instance plots were rendered (false after a warning)
};

// The sweep, `out_dir` written (WriteMigCharacterizeDir) and the plots rendered beside it; the
// directory's error when it cannot be written (a plot that fails is a warning, not an error).
// REQUIRES: model set; every layout valid on model->mig().
[[nodiscard]] core::Result<MigModelSweep> RunMigModelSweep(const MigModelSweepRequest& request);

}  // namespace headroom::app

#endif  // HEADROOM_APP_MIG_MODEL_SWEEP_H_
