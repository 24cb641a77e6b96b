#include "app/context.h"

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "catalog/mig_catalog.h"
#include "core/parse.h"
#include "gpu/nvml/nvml_device.h"
#include "gpu/sim/sim_device.h"

namespace headroom::app {
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

core::Result<catalog::HardwareCatalog> LoadCatalog(const std::string& catalog_dir) {
  if (catalog_dir.empty()) return catalog::HardwareCatalog::Embedded();
  return catalog::HardwareCatalog::LoadDirectory(catalog_dir);
}

core::Result<mig::GpuMigSpec> FindMigGpu(const std::string& catalog_dir, const std::string& gpu) {
  HEADROOM_ASSIGN_OR_RETURN(catalog::HardwareCatalog hardware, LoadCatalog(catalog_dir));
  HEADROOM_ASSIGN_OR_RETURN(catalog::MigCatalog mig_catalog, catalog::MigCatalog::Embedded());
  auto spec = mig_catalog.Find(gpu, hardware);
  if (!spec) return core::Fail(spec.error().WithContext("--gpu"));
  return **spec;
}

core::Result<mig::GpuMigSpec> MigSpecOfDevice(const std::string& catalog_dir,
                                              const gpu::Device& device) {
  if (!device.info().catalog_type.has_value()) {
    return core::Fail(core::Error::NotFound(
        fmt::format("GPU {}: '{}' is not in the hardware catalog, so its MIG profiles are "
                    "unknown",
                    device.info().index, device.info().name)));
  }
  auto spec = FindMigGpu(catalog_dir, *device.info().catalog_type);
  if (!spec) {
    return core::Fail(spec.error().WithContext(fmt::format("GPU {}", device.info().index)));
  }
  return spec;
}

gpu::MigSpecLookup MigSpecLookupOf(const std::string& catalog_dir) {
  return [catalog_dir](const gpu::Device& device) { return MigSpecOfDevice(catalog_dir, device); };
}

core::Result<catalog::MigCatalogs> LoadMigCatalogs(const std::string& catalog_dir) {
  HEADROOM_ASSIGN_OR_RETURN(catalog::HardwareCatalog hardware, LoadCatalog(catalog_dir));
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

core::Result<DeviceSet> OpenDevices(const std::string& catalog_dir, const BackendOptions& options,
                                    core::Clock* clock) {
  HEADROOM_ASSIGN_OR_RETURN(std::vector<std::string> selectors, Selectors(options.gpus));
  HEADROOM_ASSIGN_OR_RETURN(catalog::HardwareCatalog catalog, LoadCatalog(catalog_dir));
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

core::Result<std::string> WriteReport(report::ResultKind kind, const std::string& dir,
                                      const std::function<void(const std::string&)>& on_warning) {
  HEADROOM_ASSIGN_OR_RETURN(format::WrittenReport written, report::WriteResultReport(kind, dir));
  if (on_warning) {
    for (const std::string& warning : written.warnings) on_warning(warning);
  }
  return written.path;
}

int ThreadsOrCores(int threads) {
  return threads > 0 ? threads : static_cast<int>(std::thread::hardware_concurrency());
}

}  // namespace headroom::app
