#include "cli/mig_characterize_device.h"

#include <iostream>

#include <fmt/format.h>

#include "cli/terminal.h"
#include "report/mig_device_sweep_report.h"
#include "sim/mig_device_sweep.h"

namespace headroom::cli {

int RunMigCharacterizeOnDevice(const GlobalOptions& global, const MigDeviceSweepOptions& o) {
  core::SystemClock clock;
  auto set = OpenDevices(global, o.backend, &clock);
  if (!set) return ReportError(set.error());
  if (set->devices.size() != 1) {
    return ReportError(core::Error::InvalidArgument(
        fmt::format("--gpus: characterize one GPU at a time ({} selected)", set->devices.size())));
  }
  gpu::Device& device = *set->devices.front();
  auto spec = MigSpecOfDevice(global, device);
  if (!spec) return ReportError(spec.error());
  InstallStopHandlers();
  auto sweep =
      sim::RunMigDeviceSweep(device, *spec, clock,
                             {.layouts = o.layouts,
                              .command = o.command,
                              .idle_s = o.idle_s,
                              .enable_mig = o.enable_mig,
                              .stop = &StopRequested(),
                              .on_layout =
                                  [](const std::string& layout) {
                                    PrintNote(fmt::format("mig characterize: {} ...", layout));
                                  },
                              .on_error = [](const std::string& message) { PrintError(message); }});
  if (!sweep) return ReportError(sweep.error());
  if (!o.out.empty()) {
    if (auto st = report::WriteMigDeviceSweepDir(o.out, *sweep, o.samples); !st) {
      return ReportError(st.error());
    }
  }
  const report::MigDeviceSweepContext context{.gpu_index = device.info().index,
                                              .gpu = spec->name,
                                              .backend = set->backend,
                                              .samples = o.samples};
  if (o.json) {
    std::cout << report::MigDeviceSweepJson(*sweep, context).dump(2) << "\n";
    return kExitOk;
  }
  std::cout << report::MigDeviceSweepText(*sweep, context, o.out, StdoutStyle());
  return sweep->AnyCopyFailed() ? kExitRuntime : kExitOk;
}

}  // namespace headroom::cli
