#include "cli/mig_characterize_device.h"

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "cli/terminal.h"
#include "core/files.h"
#include "core/subprocess.h"
#include "core/time.h"
#include "gpu/mig_apply.h"
#include "gpu/mig_restorer.h"
#include "mig/attribution.h"
#include "mig/enumerate.h"
#include "mig/layout.h"
#include "report/table.h"

namespace headroom::cli {
namespace {

using nlohmann::ordered_json;
using Steady = std::chrono::steady_clock;

constexpr auto kCopyPollInterval = std::chrono::milliseconds(20);
constexpr auto kTermGrace = std::chrono::seconds(5);

// One copy of the user's command on one MIG instance (core::Subprocess), and when it ended. Its
// output passes straight through.
class InstanceProcess {
 public:
  // `extra_env`: "NAME=value" entries.
  static core::Result<InstanceProcess> Start(const std::vector<std::string>& argv,
                                             const std::vector<std::string>& extra_env) {
    core::SpawnOptions options;
    for (const std::string& entry : extra_env) {
      const size_t eq = entry.find('=');
      options.extra_env.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
    }
    HEADROOM_ASSIGN_OR_RETURN(core::Subprocess child, core::Subprocess::Start(argv, options));
    return InstanceProcess(std::move(child));
  }

  // The exit code once it has ended (128 + signal when killed).
  std::optional<int> Poll() {
    const bool ended_before = ended_;
    const std::optional<int> code = child_.Poll();
    if (code && !ended_before) {
      ended_ = true;
      end_ = Steady::now();
    }
    return code;
  }
  void Signal(int sig) const { child_.Signal(sig); }
  double Seconds(Steady::time_point start) const {
    return std::chrono::duration<double>(end_ - start).count();
  }

 private:
  explicit InstanceProcess(core::Subprocess child) : child_(std::move(child)) {}
  core::Subprocess child_;
  bool ended_ = false;
  Steady::time_point end_;
};

// Stops every copy: SIGTERM, then SIGKILL after a grace period.
void StopAll(std::vector<InstanceProcess>& procs) {
  for (InstanceProcess& p : procs) p.Signal(SIGTERM);
  const auto deadline = Steady::now() + kTermGrace;
  bool all = false;
  while (!all && Steady::now() < deadline) {
    all = true;
    for (InstanceProcess& p : procs) all = p.Poll().has_value() && all;
    if (!all) std::this_thread::sleep_for(kCopyPollInterval);
  }
  for (InstanceProcess& p : procs) p.Signal(SIGKILL);
  for (InstanceProcess& p : procs) {
    while (!p.Poll()) std::this_thread::sleep_for(kCopyPollInterval);
  }
}

struct InstanceRow {
  std::string layout = {};
  std::string slice = {};
  std::string uuid = {};
  int sm_count = 0;
  int exit_code = 0;
  double seconds = 0;
  double energy_activity_j = 0;
  double energy_sm_share_j = 0;
};

struct LayoutRun {
  std::string layout = {};
  double window_s = 0;
  double energy_j = 0;
  std::vector<InstanceRow> instances = {};
};

core::Result<double> EnergyNow(gpu::Device& device) {
  HEADROOM_ASSIGN_OR_RETURN(core::Joules e, device.EnergyCounter());
  return e.value();
}

core::Result<LayoutRun> RunLayout(gpu::Device& device, const mig::GpuMigSpec& spec,
                                  const mig::Layout& layout, const MigDeviceSweepOptions& o,
                                  double idle_w) {
  auto report = gpu::ApplyMigLayout(device, spec, layout, {});
  if (!report) return core::Fail(report.error());
  if (!report->ok()) return core::Fail(*report->error);
  HEADROOM_ASSIGN_OR_RETURN(std::vector<gpu::MigGpuInstance> instances, device.MigInstances());
  LayoutRun run{.layout = mig::FormatLayout(layout)};
  std::vector<std::vector<std::string>> envs;
  for (const gpu::MigGpuInstance& gi : instances) {
    const mig::GiProfile* profile = spec.FindProfileById(gi.profile_id);
    for (const gpu::MigComputeInstance& ci : gi.compute_instances) {
      InstanceRow row{
          .layout = run.layout,
          .slice = fmt::format("{}@{}", profile ? profile->name : "?", gi.start),
          .uuid = ci.uuid,
          .sm_count = ci.sm_count > 0 ? ci.sm_count : (profile ? profile->sm_count : 0)};
      if (row.uuid.empty()) {
        return core::Fail(core::Error::Unavailable(
            fmt::format("{}: the driver gave no MIG device UUID for {}", run.layout, row.slice)));
      }
      envs.push_back({"CUDA_VISIBLE_DEVICES=" + row.uuid, "HEADROOM_MIG_SLICE=" + row.slice,
                      fmt::format("HEADROOM_MIG_INSTANCE={}", run.instances.size())});
      run.instances.push_back(std::move(row));
    }
  }
  HEADROOM_ASSIGN_OR_RETURN(const double e0, EnergyNow(device));
  const Steady::time_point start = Steady::now();
  std::vector<InstanceProcess> procs;
  for (const auto& env : envs) {
    auto p = InstanceProcess::Start(o.command, env);
    if (!p) {
      StopAll(procs);
      return core::Fail(p.error());
    }
    procs.push_back(std::move(*p));
  }
  while (true) {
    bool all = true;
    for (InstanceProcess& p : procs) all = p.Poll().has_value() && all;
    if (all) break;
    if (StopRequested().load()) {
      StopAll(procs);
      return core::Fail(core::Error::Cancelled("interrupted"));
    }
    std::this_thread::sleep_for(kCopyPollInterval);
  }
  run.window_s = std::chrono::duration<double>(Steady::now() - start).count();
  HEADROOM_ASSIGN_OR_RETURN(const double e1, EnergyNow(device));
  run.energy_j = std::max(0.0, e1 - e0);
  std::vector<mig::InstanceUse> uses;
  for (size_t i = 0; i < procs.size(); ++i) {
    run.instances[i].exit_code = *procs[i].Poll();
    run.instances[i].seconds = procs[i].Seconds(start);
    uses.push_back({.sm_count = run.instances[i].sm_count,
                    .busy_s = run.instances[i].seconds,
                    .has_job = true});
  }
  const mig::EnergyShares shares = mig::AttributeEnergy(run.energy_j, idle_w, run.window_s, uses);
  for (size_t i = 0; i < procs.size(); ++i) {
    run.instances[i].energy_activity_j = shares.activity_j[i];
    run.instances[i].energy_sm_share_j = shares.sm_share_j[i];
  }
  return run;
}

}  // namespace

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
  auto mode = device.MigMode();
  if (!mode) return ReportError(mode.error());
  std::optional<gpu::MigModeRestorer> mode_restorer;
  if (!mode->current) {
    if (!o.enable_mig) {
      return ReportError(core::Error::FailedPrecondition(fmt::format(
          "GPU {}: MIG mode is disabled; enable it first (as root: nvidia-smi -i {} -mig 1, then "
          "reset the GPU if nvidia-smi asks), or pass --enable-mig to have headroom turn it on "
          "for the sweep and off after",
          device.info().index, device.info().index)));
    }
    auto enabled = device.SetMigMode(true);
    if (!enabled) return ReportError(enabled.error().WithContext("--enable-mig"));
    if (!enabled->current) {
      (void)device.SetMigMode(false);  // leave no pending change behind
      return ReportError(core::Error::FailedPrecondition(fmt::format(
          "--enable-mig: GPU {} needs a reset before MIG mode takes effect, and headroom never "
          "resets GPUs; enable it with nvidia-smi -i {} -mig 1, reset the GPU, then run without "
          "--enable-mig",
          device.info().index, device.info().index)));
    }
    mode_restorer.emplace(device, [](const core::Error& e) {
      PrintError("turning MIG mode back off failed: " + e.message());
    });
  }
  auto layouts = mig::ParseValidLayouts(*spec, o.layouts);
  if (!layouts) return ReportError(layouts.error().WithContext("--layout"));
  if (layouts->empty()) {
    for (auto& [count, layout] : mig::EqualInstanceLayouts(*spec)) layouts->push_back(layout);
  }
  auto state = gpu::ReadMigState(device, *spec);
  if (!state) return ReportError(state.error());
  const mig::Layout original = gpu::RestorableLayout(*state);
  auto processes = device.RunningProcesses();
  if (processes && !processes->empty()) {
    return ReportError(core::Error::FailedPrecondition(
        fmt::format("GPU {}: {} compute processes are running; characterize needs the GPU to "
                    "itself",
                    device.info().index, processes->size())));
  }
  InstallStopHandlers();
  // Declared after mode_restorer, so the layout goes back before MIG mode is turned off.
  gpu::LayoutRestorer restorer(device, *spec, original);

  // Idle power: the energy counter over a quiet window, on the layout found.
  auto idle_e0 = EnergyNow(device);
  if (!idle_e0) return ReportError(idle_e0.error());
  const Steady::time_point idle_start = Steady::now();
  while (std::chrono::duration<double>(Steady::now() - idle_start).count() < o.idle_s &&
         !StopRequested().load()) {
    std::this_thread::sleep_for(kCopyPollInterval);
  }
  auto idle_e1 = EnergyNow(device);
  if (!idle_e1) return ReportError(idle_e1.error());
  const double idle_w =
      (*idle_e1 - *idle_e0) / std::chrono::duration<double>(Steady::now() - idle_start).count();

  std::vector<LayoutRun> runs;
  for (const mig::Layout& layout : *layouts) {
    if (StopRequested().load()) break;
    PrintNote(fmt::format("mig characterize: {} ...", mig::FormatLayout(layout)));
    auto run = RunLayout(device, *spec, layout, o, idle_w);
    if (!run) {
      const core::Error error = run.error().WithContext(mig::FormatLayout(layout));
      if (auto st = restorer.Restore(); !st) {
        PrintError("restoring the original layout failed: " + st.error().message());
      }
      return ReportError(error);
    }
    runs.push_back(std::move(*run));
  }
  if (auto st = restorer.Restore(); !st) {
    return ReportError(st.error().WithContext(
        fmt::format("restoring the original layout '{}'", mig::FormatLayout(original))));
  }
  if (StopRequested().load()) {
    return ReportError(core::Error::Cancelled(fmt::format(
        "interrupted; the original layout '{}' is restored", mig::FormatLayout(original))));
  }

  std::string csv =
      "layout,instance,slice,uuid,sm_count,exit_code,seconds,window_s,gpu_energy_j,"
      "energy_activity_j,energy_sm_share_j,j_per_sample_activity\n";
  ordered_json jruns = ordered_json::array();
  using Align = report::TextTable::Align;
  report::TextTable table({{"LAYOUT", Align::kLeft},
                           {"SLICE", Align::kLeft},
                           {"EXIT"},
                           {"SECONDS"},
                           {"GPU_ENERGY_J"},
                           {"ENERGY_J (activity)"},
                           {"ENERGY_J (SM share)"},
                           {"J/SAMPLE"}});
  for (const LayoutRun& run : runs) {
    ordered_json jin = ordered_json::array();
    for (size_t i = 0; i < run.instances.size(); ++i) {
      const InstanceRow& r = run.instances[i];
      const double per_sample = o.samples ? r.energy_activity_j / *o.samples : 0;
      csv += fmt::format("\"{}\",{},{},{},{},{},{:.3f},{:.3f},{:.1f},{:.1f},{:.1f},{}\n", r.layout,
                         i, r.slice, r.uuid, r.sm_count, r.exit_code, r.seconds, run.window_s,
                         run.energy_j, r.energy_activity_j, r.energy_sm_share_j,
                         o.samples ? fmt::format("{:.6g}", per_sample) : std::string());
      table.AddRow({r.layout, r.slice, std::to_string(r.exit_code),
                    fmt::format("{:.2f}", r.seconds), fmt::format("{:.0f}", run.energy_j),
                    fmt::format("{:.0f}", r.energy_activity_j),
                    fmt::format("{:.0f}", r.energy_sm_share_j),
                    o.samples ? fmt::format("{:.4g}", per_sample) : std::string("-")});
      jin.push_back({{"slice", r.slice},
                     {"uuid", r.uuid},
                     {"sm_count", r.sm_count},
                     {"exit_code", r.exit_code},
                     {"seconds", r.seconds},
                     {"energy_activity_j", r.energy_activity_j},
                     {"energy_sm_share_j", r.energy_sm_share_j}});
    }
    jruns.push_back({{"layout", run.layout},
                     {"window_s", run.window_s},
                     {"gpu_energy_j", run.energy_j},
                     {"instances", jin}});
  }
  if (!o.out.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(o.out, ec);
    if (ec) {
      return ReportError(core::Error::Unavailable(
          fmt::format("--out {}: cannot create the directory: {}", o.out, ec.message())));
    }
    if (auto st = core::WriteFileAtomically(o.out + "/results.csv", csv); !st) {
      return ReportError(st.error());
    }
  }
  if (o.json) {
    std::cout << ordered_json{{"gpu", spec->name},
                              {"backend", set->backend},
                              {"idle_power_w", idle_w},
                              {"original_layout", mig::FormatLayout(original)},
                              {"runs", jruns}}
                     .dump(2)
              << "\n";
    return kExitOk;
  }
  std::cout << fmt::format(
      "MIG characterization of GPU {} ({}): idle {:.1f} W; whole-GPU energy attributed by "
      "activity (idle by SM share, the rest by SMs x run time) and by SM share\n",
      device.info().index, spec->name, idle_w);
  std::cout << table.Render(StdoutStyle());
  std::cout << fmt::format("Original layout '{}' restored.{}\n", mig::FormatLayout(original),
                           o.out.empty() ? "" : " Wrote " + o.out + "/results.csv");
  bool failed = false;
  for (const LayoutRun& run : runs) {
    for (const InstanceRow& r : run.instances) failed = failed || r.exit_code != 0;
  }
  return failed ? kExitRuntime : kExitOk;
}

}  // namespace headroom::cli
