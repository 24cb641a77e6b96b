// `headroom monitor`: stream live telemetry of the selected GPUs.
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/parse.h"
#include "gpu/snapshot.h"
#include "report/device_report.h"

namespace headroom::cli {
namespace {

constexpr core::Duration kMinInterval = std::chrono::milliseconds(10);
constexpr core::Duration kMaxInterval = std::chrono::seconds(60);

struct MonitorOptions {
  BackendOptions backend;
  std::string interval = "1s";
  std::string duration;  // empty: until Ctrl-C
  std::string format = "table";
  bool virtual_time = false;
};

struct MonitorPlan {
  core::Duration interval;
  std::optional<core::Duration> duration;
  report::MonitorFormat format;
};

core::Result<MonitorPlan> Validate(const MonitorOptions& o) {
  MonitorPlan plan{};
  auto interval = core::ParseDuration(o.interval);
  if (!interval) return core::Fail(interval.error().WithContext("--interval"));
  if (*interval < kMinInterval || *interval > kMaxInterval) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--interval {} is outside 10ms..60s", o.interval)));
  }
  plan.interval = *interval;
  if (!o.duration.empty()) {
    auto duration = core::ParseDuration(o.duration);
    if (!duration) return core::Fail(duration.error().WithContext("--duration"));
    plan.duration = *duration;
  }
  HEADROOM_ASSIGN_OR_RETURN(plan.format, report::ParseMonitorFormat(o.format));
  if (o.virtual_time && o.backend.backend != "sim") {
    return core::Fail(core::Error::InvalidArgument("--virtual-time needs --backend sim"));
  }
  if (o.virtual_time && !plan.duration) {
    return core::Fail(core::Error::InvalidArgument("--virtual-time needs --duration"));
  }
  return plan;
}

int RunMonitor(const GlobalOptions& global, const MonitorOptions& options) {
  auto plan = Validate(options);
  if (!plan) return ReportError(plan.error());
  core::SystemClock system_clock;
  core::FakeClock virtual_clock;
  core::Clock* clock = options.virtual_time ? static_cast<core::Clock*>(&virtual_clock)
                                            : static_cast<core::Clock*>(&system_clock);
  auto set = OpenDevices(global, options.backend, clock);
  if (!set) return ReportError(set.error());
  InstallStopHandlers();

  std::vector<std::optional<core::Joules>> start_energy;
  for (auto& device : set->devices) {
    auto energy = device->EnergyCounter();
    start_energy.push_back(energy ? std::optional(*energy) : std::nullopt);
  }
  report::MonitorWriter writer(plan->format, std::cout);
  const core::TimePoint start = clock->Now();
  for (long k = 1;; ++k) {
    const core::TimePoint deadline = start + plan->interval * k;
    if (plan->duration && deadline - start > *plan->duration) break;
    clock->SleepUntil(deadline, &StopRequested());
    if (StopRequested().load()) break;
    for (size_t i = 0; i < set->devices.size(); ++i) {
      gpu::Device& device = *set->devices[i];
      auto snapshot = gpu::TakeSnapshot(device, clock->Now());
      if (!snapshot) return ReportError(snapshot.error());
      report::MonitorRow row;
      row.time_s = core::ToSeconds(snapshot->time - start);
      row.gpu = device.info().index;
      if (snapshot->energy_counter && start_energy[i]) {
        row.energy_since_start = *snapshot->energy_counter - *start_energy[i];
      }
      row.snapshot = std::move(*snapshot);
      writer.Write(row);
    }
  }
  return kExitOk;
}

}  // namespace

void RegisterMonitor(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  CLI::App* cmd =
      app.add_subcommand("monitor", "Stream live GPU telemetry (power, energy, clocks)");
  auto* options = OptionsRunBy(cmd, run, global, RunMonitor);
  AddBackendOptions(cmd, &options->backend);
  cmd->add_option("--interval", options->interval, "Sampling interval, 10ms..60s")
      ->capture_default_str();
  cmd->add_option("--duration", options->duration, "Stop after this long (default: until Ctrl-C)");
  cmd->add_option("--format", options->format, "Output format: table, csv or jsonl")
      ->capture_default_str();
  cmd->add_flag("--virtual-time", options->virtual_time,
                "Sim backend only: run on simulated time, without waiting (needs --duration)");
}

}  // namespace headroom::cli
