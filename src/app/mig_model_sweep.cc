#include "app/mig_model_sweep.h"

#include "format/plot.h"
#include "mig/characterize.h"
#include "report/mig_characterize_summary.h"
#include "report/mig_instances.h"

namespace headroom::app {
namespace {

// The equal-instance plots beside results.csv; false (after a warning) when one failed.
bool RenderScalingPlots(const MigModelSweepRequest& request) {
  const auto scaling =
      mig::ScaleWithEqualInstances(*request.model, request.workloads, request.fits);
  for (const format::Plot& plot : report::MigScalingPlots(request.model->mig().name, scaling)) {
    if (auto st = format::RenderPlot(request.out_dir, plot); !st) {
      if (request.on_warning) request.on_warning(st.error().message());
      return false;
    }
  }
  return true;
}

}  // namespace

core::Result<MigModelSweep> RunMigModelSweep(const MigModelSweepRequest& request) {
  const mig::SliceModel& model = *request.model;
  MigModelSweep sweep{.report = {.inputs = {.power_limit_w = model.power_limit().value(),
                                            .version = request.version,
                                            .geometry = report::GeometryOf(model.mig())}}};
  sweep.report.results = mig::CharacterizeSweep(model, request.workloads, request.fits,
                                                request.layouts, request.progress);
  for (const mig::MeasuredWorkload& w : request.workloads) {
    sweep.report.inputs.workloads.push_back(w.name);
  }
  for (const auto& layout : request.layouts) {
    sweep.report.inputs.layouts.push_back(layout ? mig::FormatLayout(*layout) : "MIG off");
  }
  HEADROOM_RETURN_IF_ERROR(report::WriteMigCharacterizeDir(request.out_dir, sweep.report));
  sweep.plotted = RenderScalingPlots(request);
  return sweep;
}

}  // namespace headroom::app
