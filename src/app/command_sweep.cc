#include "app/command_sweep.h"

#include <algorithm>
#include <csignal>

#include <fmt/format.h>

namespace headroom::app {

sim::CommandRun ReduceRun(const sim::Setting& setting, const telemetry::MeasuredRunResult& run) {
  sim::CommandRun row{setting, run.exit_code, run.duration_s};
  std::vector<double> instant;
  for (const telemetry::Sample& s : run.sampler->Recent()) {
    if (s.snapshot.power_instant) instant.push_back(s.snapshot.power_instant->value());
  }
  row.p99_w = sim::Percentile(std::move(instant), 0.99);
  const auto reports = run.sampler->Reports();
  for (const telemetry::EnergyReport& r : reports) {
    row.energy_j += r.energy.value();
    row.peak_w = std::max(row.peak_w, r.peak_power.value());
    row.capped_s = std::max(row.capped_s, core::ToSeconds(r.time_power_capped));
  }
  if (row.duration_s > 0 && !reports.empty()) {
    row.mean_w = row.energy_j / row.duration_s / static_cast<double>(reports.size());
  }
  row.work = run.sampler->work();
  return row;
}

core::Result<model::GpuSpec> DeviceSweepBounds(gpu::Device& device) {
  auto limits = device.PowerLimits();
  auto clocks = device.SupportedSmClocks();
  if (!limits || !clocks || clocks->empty()) {
    return core::Fail(core::Error::Unimplemented(
        "these GPUs do not report their power-limit range and clocks, so nothing can be swept"));
  }
  model::GpuSpec bounds;
  bounds.name = device.info().name;
  bounds.power_limit_min = limits->min;
  bounds.power_limit_max = limits->max;
  bounds.sm_clock_min = clocks->back();
  bounds.sm_clock_max = clocks->front();
  bounds.sm_clock_step = clocks->size() > 1 ? (*clocks)[0] - (*clocks)[1] : core::Megahertz(1);
  return bounds;
}

core::Status ApplySetting(const sim::Setting& setting, const std::vector<gpu::Device*>& devices,
                          gpu::ControlRestorer& restorer) {
  HEADROOM_RETURN_IF_ERROR(restorer.Restore());
  for (gpu::Device* d : devices) {
    switch (setting.kind) {
      case sim::Setting::Kind::kDefault:
        break;
      case sim::Setting::Kind::kClockLock: {
        HEADROOM_ASSIGN_OR_RETURN(auto clocks, d->SupportedSmClocks());
        HEADROOM_RETURN_IF_ERROR(d->LockSmClocks(clocks.back(), core::Megahertz(setting.value)));
        break;
      }
      case sim::Setting::Kind::kPowerLimit:
        HEADROOM_RETURN_IF_ERROR(d->SetPowerLimit(core::Watts(setting.value)));
        break;
    }
  }
  return core::Ok();
}

core::Result<std::vector<sim::CommandRun>> RunCommandSweep(
    const std::vector<gpu::Device*>& devices, core::Clock* clock,
    const std::vector<sim::Setting>& settings, const CommandSweepOptions& options) {
  auto note = [&options](const std::string& text) {
    if (options.note) options.note(text);
  };
  HEADROOM_ASSIGN_OR_RETURN(auto restorer, gpu::ControlRestorer::Save(devices));
  std::vector<sim::CommandRun> runs;
  for (const sim::Setting& setting : settings) {
    if (auto st = ApplySetting(setting, devices, restorer); !st) {
      return core::Fail(st.error().WithContext(setting.Label()));
    }
    clock->SleepUntil(clock->Now() + options.settle, options.stop);
    note("running under " + setting.Label());
    HEADROOM_ASSIGN_OR_RETURN(auto run, telemetry::RunMeasured(devices, clock,
                                                               {.command = options.command,
                                                                .interval = options.interval,
                                                                .on_warning = options.on_warning}));
    if (auto error = run.sampler->error()) return core::Fail(error->WithContext(setting.Label()));
    runs.push_back(ReduceRun(setting, run));
    const int code = run.exit_code;
    if (code == 128 + SIGINT || code == 128 + SIGTERM) {
      note("interrupted; restoring GPU settings");
      break;
    }
    if (code != 0) {
      return core::Fail(core::Error::Internal(fmt::format(
          "the command exited with {} under {}; stopping the sweep", code, setting.Label())));
    }
  }
  HEADROOM_RETURN_IF_ERROR(restorer.Restore());
  for (const std::string& line : restorer.Describe()) note("restored " + line);
  return runs;
}

}  // namespace headroom::app
