#include "cli/common.h"

#include <csignal>
#include <cstdio>

#include <fmt/format.h>

#include "gpu/nvml/nvml_library.h"
#include "gpu/sim/sim_device.h"

namespace headroom::cli {

void AddBackendOptions(CLI::App* command, BackendOptions* options) {
  command->add_option("--backend", options->backend, "GPU backend: sim (simulated) or nvml")
      ->check(CLI::IsMember({"sim", "nvml"}))
      ->capture_default_str();
  command->add_option("--sim-gpu", options->sim_gpu, "Simulated GPU type (catalog name or alias)")
      ->capture_default_str();
  command->add_option("--sim-count", options->sim_count, "Number of simulated GPUs")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  command
      ->add_option("--sim-load", options->sim_load,
                   "Simulated load: idle, prefill, decode, inference, or a script such as "
                   "'prefill:400ms,decode*0.8:1600ms'")
      ->capture_default_str();
}

core::Result<catalog::HardwareCatalog> LoadCatalog(const GlobalOptions& global) {
  if (global.catalog_dir.empty()) return catalog::HardwareCatalog::Embedded();
  return catalog::HardwareCatalog::LoadDirectory(global.catalog_dir);
}

core::Result<DeviceSet> OpenDevices(const GlobalOptions& global, const BackendOptions& options,
                                    core::Clock* clock) {
  if (options.backend == "nvml") {
    HEADROOM_ASSIGN_OR_RETURN(auto library, gpu::nvml::NvmlLibrary::Open());
    return core::Fail(core::Error::Unimplemented(fmt::format(
        "NVML was found at {}, but this build has no NVML backend yet; use --backend sim",
        library->path())));
  }
  HEADROOM_ASSIGN_OR_RETURN(catalog::HardwareCatalog catalog, LoadCatalog(global));
  HEADROOM_ASSIGN_OR_RETURN(const model::GpuSpec* spec, catalog.Gpu(options.sim_gpu));
  auto script = gpu::sim::LoadScript::Parse(options.sim_load);
  if (!script) return core::Fail(script.error().WithContext("--sim-load"));
  gpu::sim::SimOptions sim;
  sim.script = std::move(*script);
  return DeviceSet{gpu::sim::CreateSimDevices(*spec, options.sim_count, clock, sim), "sim"};
}

int ReportError(const core::Error& error) {
  std::fprintf(stderr, "headroom: %s\n", error.message().c_str());
  switch (error.code()) {
    case core::Code::kInvalidArgument:
    case core::Code::kNotFound:
    case core::Code::kOutOfRange:
      return kExitUsage;
    default:
      return kExitRuntime;
  }
}

std::atomic<bool>& StopRequested() {
  static std::atomic<bool> stop{false};
  return stop;
}

namespace {
extern "C" void OnStopSignal(int) { StopRequested().store(true); }
}  // namespace

void InstallStopHandlers() {
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
}

}  // namespace headroom::cli
