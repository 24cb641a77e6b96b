#include "app/mig_device.h"

#include <fmt/format.h>

#include "mig/layout.h"

namespace headroom::app {
namespace {

// ApplyMigLayout's refusal while compute processes run, with what to do about it.
core::Error WithForceAdvice(core::Error e) {
  if (e.message().find("running compute processes") == std::string::npos) return e;
  return core::Error(e.code(), e.message() +
                                   "; stop them first, or pass --force (the driver still "
                                   "refuses to destroy an instance in use)");
}

}  // namespace

core::Result<MigShowResult> MigShow(const MigShowRequest& request) {
  core::SystemClock clock;
  HEADROOM_ASSIGN_OR_RETURN(const DeviceSet set,
                            OpenDevices(request.catalog_dir, request.backend, &clock));
  MigShowResult result{.backend = set.backend, .gpus = {}};
  const gpu::MigSpecLookup lookup = MigSpecLookupOf(request.catalog_dir);
  for (const auto& device : set.devices) {
    HEADROOM_ASSIGN_OR_RETURN(gpu::GpuMigView view, gpu::ReadMigView(*device, lookup));
    if (request.on_gpu) request.on_gpu(view);
    result.gpus.push_back(std::move(view));
  }
  return result;
}

core::Result<MigApplyResult> MigApply(const MigApplyRequest& request) {
  HEADROOM_ASSIGN_OR_RETURN(const mig::Layout layout, mig::ParseLayout(request.layout));
  core::SystemClock clock;
  HEADROOM_ASSIGN_OR_RETURN(const DeviceSet set,
                            OpenDevices(request.catalog_dir, request.backend, &clock));
  MigApplyResult result{.backend = set.backend, .gpus = {}};
  for (const auto& device : set.devices) {
    HEADROOM_ASSIGN_OR_RETURN(const mig::GpuMigSpec spec,
                              MigSpecOfDevice(request.catalog_dir, *device));
    if (auto valid = mig::ValidateLayout(spec, layout); !valid) {
      return core::Fail(core::Error::InvalidArgument(fmt::format("GPU {}: invalid layout on {}: {}",
                                                                 device->info().index, spec.name,
                                                                 valid.error().message())));
    }
    auto report = gpu::ApplyMigLayout(*device, spec, layout,
                                      {.dry_run = request.dry_run, .force = request.force});
    if (!report) return core::Fail(WithForceAdvice(report.error()));
    MigApplied applied{
        .info = device->info(), .target = mig::FormatLayout(layout), .report = *std::move(report)};
    if (request.on_gpu) request.on_gpu(applied);
    const bool ok = applied.report.ok();
    result.gpus.push_back(std::move(applied));
    if (!ok) break;
  }
  return result;
}

}  // namespace headroom::app
