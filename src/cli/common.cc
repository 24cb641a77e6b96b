#include "cli/common.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "catalog/mig_catalog.h"
#include "console/terminal.h"
#include "core/parse.h"
#include "gpu/nvml/nvml_device.h"
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
  command->add_option("--gpus", options->gpus,
                      "GPUs to use: indices or UUIDs, comma-separated (default: all, or "
                      "CUDA_VISIBLE_DEVICES with --backend nvml)");
}

namespace {

core::Result<std::vector<std::string>> Selectors(const std::string& text) {
  std::vector<std::string> out;
  if (core::Trim(text).empty()) return out;
  for (std::string_view part : core::Split(text, ',')) {
    if (core::Trim(part).empty()) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("--gpus '{}': empty entry (expected e.g. 0,1 or GPU-...)", text)));
    }
    out.emplace_back(core::Trim(part));
  }
  return out;
}

// Keeps the sim devices named by `selectors` (indices or UUIDs), in the order given.
core::Result<std::vector<std::unique_ptr<gpu::Device>>> SelectSim(
    std::vector<std::unique_ptr<gpu::Device>> all, const std::vector<std::string>& selectors) {
  if (selectors.empty()) return all;
  std::vector<std::unique_ptr<gpu::Device>> picked;
  for (const std::string& sel : selectors) {
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& d) {
      return d && (d->info().uuid == sel || std::to_string(d->info().index) == sel);
    });
    if (it == all.end()) {
      return core::Fail(core::Error::NotFound(fmt::format("--gpus: no GPU '{}'", sel)));
    }
    picked.push_back(std::move(*it));
  }
  return picked;
}

}  // namespace

void AddEngineOptions(CLI::App* command, EngineOptions* options) {
  auto* engine = command->add_option(
      "--engine", options->engine,
      fmt::format("Serving engine whose calibration the model uses (default: {})",
                  catalog::kDefaultEngine));
  command
      ->add_option("--engine-file", options->engine_file,
                   "An engine calibration written by headroom model fit --write")
      ->excludes(engine);
}

core::Result<EngineChoice> LoadEngines(const EngineOptions& options, std::string_view fallback) {
  HEADROOM_ASSIGN_OR_RETURN(catalog::EngineCatalog engines, catalog::EngineCatalog::Embedded());
  EngineChoice out{.engines = std::move(engines), .engine = std::string(fallback)};
  if (!options.engine_file.empty()) {
    auto name = out.engines.AddFile(options.engine_file);
    if (!name) return core::Fail(name.error().WithContext("--engine-file"));
    out.engine = *name;
  } else if (!options.engine.empty()) {
    auto known = out.engines.Engine(options.engine);
    if (!known) return core::Fail(known.error().WithContext("--engine"));
    out.engine = options.engine;
  }
  return out;
}

core::Result<catalog::HardwareCatalog> LoadCatalog(const GlobalOptions& global) {
  if (global.catalog_dir.empty()) return catalog::HardwareCatalog::Embedded();
  return catalog::HardwareCatalog::LoadDirectory(global.catalog_dir);
}

core::Result<mig::GpuMigSpec> FindMigGpu(const GlobalOptions& global, const std::string& gpu) {
  HEADROOM_ASSIGN_OR_RETURN(catalog::HardwareCatalog hardware, LoadCatalog(global));
  HEADROOM_ASSIGN_OR_RETURN(catalog::MigCatalog mig_catalog, catalog::MigCatalog::Embedded());
  auto spec = mig_catalog.Find(gpu, hardware);
  if (!spec) return core::Fail(spec.error().WithContext("--gpu"));
  return **spec;
}

core::Result<mig::GpuMigSpec> MigSpecOfDevice(const GlobalOptions& global,
                                              const gpu::Device& device) {
  if (!device.info().catalog_type.has_value()) {
    return core::Fail(core::Error::NotFound(
        fmt::format("GPU {}: '{}' is not in the hardware catalog, so its MIG profiles are "
                    "unknown",
                    device.info().index, device.info().name)));
  }
  auto spec = FindMigGpu(global, *device.info().catalog_type);
  if (!spec) {
    return core::Fail(spec.error().WithContext(fmt::format("GPU {}", device.info().index)));
  }
  return spec;
}

gpu::MigSpecLookup MigSpecLookupOf(const GlobalOptions& global) {
  return [&global](const gpu::Device& device) { return MigSpecOfDevice(global, device); };
}

core::Result<catalog::MigCatalogs> LoadMigCatalogs(const GlobalOptions& global) {
  HEADROOM_ASSIGN_OR_RETURN(catalog::HardwareCatalog hardware, LoadCatalog(global));
  return catalog::MigCatalogs::Load(std::move(hardware));
}

core::Result<mig::SliceModel> MigModelOf(const catalog::MigCatalogs& catalogs,
                                         const std::string& gpu,
                                         std::optional<double> power_limit_w) {
  auto model = catalogs.Model(gpu, power_limit_w);
  if (!model) {
    return core::Fail(model.error().WithContext(
        model.error().code() == core::Code::kOutOfRange ? "--power-limit" : "--gpu"));
  }
  return model;
}

core::Result<DeviceSet> OpenDevices(const GlobalOptions& global, const BackendOptions& options,
                                    core::Clock* clock) {
  HEADROOM_ASSIGN_OR_RETURN(std::vector<std::string> selectors, Selectors(options.gpus));
  HEADROOM_ASSIGN_OR_RETURN(catalog::HardwareCatalog catalog, LoadCatalog(global));
  if (options.backend == "nvml") {
    gpu::nvml::NvmlOpenOptions nvml;
    nvml.selectors = selectors;
    nvml.catalog_type_for_name = [catalog](std::string_view name) -> std::optional<std::string> {
      const model::GpuSpec* spec = catalog.GpuByNvmlName(name);
      return spec != nullptr ? std::optional(spec->name) : std::nullopt;
    };
    HEADROOM_ASSIGN_OR_RETURN(auto devices, gpu::nvml::OpenNvmlDevices(nvml));
    return DeviceSet{std::move(devices), "nvml"};
  }
  HEADROOM_ASSIGN_OR_RETURN(const model::GpuSpec* spec, catalog.Gpu(options.sim_gpu));
  auto script = gpu::sim::LoadScript::Parse(options.sim_load);
  if (!script) return core::Fail(script.error().WithContext("--sim-load"));
  gpu::sim::SimOptions sim;
  sim.script = std::move(*script);
  // Simulated GPUs of a MIG-capable type can be partitioned (`mig show`, `mig apply`).
  HEADROOM_ASSIGN_OR_RETURN(catalog::MigCatalog mig_catalog, catalog::MigCatalog::Embedded());
  if (auto mig = mig_catalog.Find(spec->name, catalog); mig) sim.mig = **mig;
  HEADROOM_ASSIGN_OR_RETURN(
      auto devices,
      SelectSim(gpu::sim::CreateSimDevices(*spec, options.sim_count, clock, sim), selectors));
  return DeviceSet{std::move(devices), "sim"};
}

core::Result<std::vector<core::Megahertz>> ParseClockList(const std::string& text,
                                                          const model::GpuSpec& spec) {
  auto values = core::ParseValueList(text);
  if (!values) return core::Fail(values.error().WithContext("--sm-clocks"));
  auto clocks = spec.ClocksInRange(*values);
  if (!clocks) return core::Fail(clocks.error().WithContext("--sm-clocks"));
  return clocks;
}

core::Result<std::vector<core::Watts>> ParsePowerLimitList(const std::string& text,
                                                           const model::GpuSpec& spec) {
  auto values = core::ParseValueList(text);
  if (!values) return core::Fail(values.error().WithContext("--power-limits"));
  auto limits = spec.PowerLimitsInRange(*values);
  if (!limits) return core::Fail(limits.error().WithContext("--power-limits"));
  return limits;
}

int PrintResult(const ResultOutput& output) {
  if (output.json) {
    std::cout << output.json_text << "\n";
    if (output.report) std::cerr << "report: " << *output.report << "\n";
    return kExitOk;
  }
  std::cout << output.text;
  if (!output.wrote.empty()) PrintNoteOut(output.wrote);
  if (output.report) std::cout << fmt::format("report: {}\n", *output.report);
  return kExitOk;
}

int ReportError(const core::Error& error) {
  PrintError(error.message());
  switch (error.code()) {
    case core::Code::kInvalidArgument:
    case core::Code::kNotFound:
    case core::Code::kOutOfRange:
      return kExitUsage;
    default:
      return kExitRuntime;
  }
}

core::Result<std::string> WriteReport(report::ResultKind kind, const std::string& dir) {
  HEADROOM_ASSIGN_OR_RETURN(format::WrittenReport written, report::WriteResultReport(kind, dir));
  for (const std::string& warning : written.warnings) PrintWarning(warning);
  return written.path;
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
