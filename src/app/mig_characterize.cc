#include "app/mig_characterize.h"

#include <fmt/format.h>

#include "app/mig_device_sweep.h"
#include "mig/enumerate.h"

namespace headroom::app {
namespace {

// `mig characterize -- COMMAND`: the command on every instance of each layout of one GPU.
core::Result<MigCharacterizeResult> SweepDevice(const MigCharacterizeRequest& r) {
  if (r.report) {
    return core::Fail(core::Error::InvalidArgument(
        "--report: only for the sweep on the model (no command after --) for now"));
  }
  core::SystemClock clock;
  HEADROOM_ASSIGN_OR_RETURN(DeviceSet set, OpenDevices(r.catalog_dir, r.backend, &clock));
  if (set.devices.size() != 1) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--gpus: characterize one GPU at a time ({} selected)", set.devices.size())));
  }
  gpu::Device& device = *set.devices.front();
  HEADROOM_ASSIGN_OR_RETURN(const mig::GpuMigSpec spec, MigSpecOfDevice(r.catalog_dir, device));
  HEADROOM_ASSIGN_OR_RETURN(mig::DeviceSweep sweep, RunMigDeviceSweep(device, spec, clock,
                                                                      {.layouts = r.layouts,
                                                                       .command = r.command,
                                                                       .idle_s = r.idle_s,
                                                                       .enable_mig = r.enable_mig,
                                                                       .stop = r.stop,
                                                                       .on_layout = r.on_layout,
                                                                       .on_error = r.on_error}));
  if (!r.out.empty()) {
    HEADROOM_RETURN_IF_ERROR(report::WriteMigDeviceSweepDir(r.out, sweep, r.samples));
  }
  return MigCharacterizeResult{.device = std::move(sweep),
                               .context = {.gpu_index = device.info().index,
                                           .gpu = spec.name,
                                           .backend = set.backend,
                                           .samples = r.samples}};
}

core::Result<MigCharacterizeResult> SweepModel(const MigCharacterizeRequest& r) {
  HEADROOM_ASSIGN_OR_RETURN(const catalog::MigCatalogs catalogs, LoadMigCatalogs(r.catalog_dir));
  HEADROOM_ASSIGN_OR_RETURN(const mig::SliceModel model,
                            MigModelOf(catalogs, r.gpu, r.power_limit_w));
  auto workloads = catalogs.workloads.Select(r.workloads);
  if (!workloads) return core::Fail(workloads.error().WithContext("--workloads"));
  auto layouts = mig::SweepLayouts(model.mig(), r.layouts, r.profiles);
  if (!layouts) {
    return core::Fail(layouts.error().WithContext(r.layouts.empty() ? "--profiles" : "--layout"));
  }
  HEADROOM_ASSIGN_OR_RETURN(auto fits, catalogs.Fits(*workloads));
  MigCharacterizeResult result;
  HEADROOM_ASSIGN_OR_RETURN(result.model, RunMigModelSweep({.model = &model,
                                                            .workloads = std::move(*workloads),
                                                            .fits = std::move(fits),
                                                            .layouts = std::move(*layouts),
                                                            .out_dir = r.out,
                                                            .version = r.version,
                                                            .progress = r.progress,
                                                            .on_warning = r.on_warning}));
  if (r.report) {
    HEADROOM_ASSIGN_OR_RETURN(
        result.report, WriteReport(report::ResultKind::kMigCharacterize, r.out, r.on_warning));
  }
  return result;
}

}  // namespace

core::Result<MigCharacterizeResult> MigCharacterize(const MigCharacterizeRequest& request) {
  if (!request.command.empty()) return SweepDevice(request);
  if (request.backend.backend != "sim" || !request.backend.gpus.empty()) {
    return core::Fail(core::Error::InvalidArgument(
        "--backend/--gpus: give the command to run on each instance after --"));
  }
  return SweepModel(request);
}

}  // namespace headroom::app
