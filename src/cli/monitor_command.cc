// `headroom monitor`: stream live telemetry of the selected GPUs.
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "cli/commands.h"
#include "core/parse.h"
#include "report/device_report.h"
#include "telemetry/monitor.h"

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
  auto set = app::OpenDevices(global.catalog_dir, options.backend, clock);
  if (!set) return ReportError(set.error());
  InstallStopHandlers();

  std::vector<gpu::Device*> devices;
  for (auto& device : set->devices) devices.push_back(device.get());
  report::MonitorWriter writer(plan->format, std::cout);
  auto done = telemetry::RunMonitor(
      devices, *clock,
      {.interval = plan->interval, .duration = plan->duration, .stop = &StopRequested()},
      [&writer](const telemetry::MonitorSample& sample) { writer.Write(sample); });
  if (!done) return ReportError(done.error());
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
