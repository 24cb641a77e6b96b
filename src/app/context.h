// What the commands compose their work from: the catalogs (the built-in ones or --catalog's), the
// serving engines' calibrations, the GPUs of a backend (the composition root picks the Device
// implementation), the flags' value lists checked against a GPU, and a result directory's report.
// Errors name the flag the value came from. Not thread-safe (a command's start-up).
#ifndef HEADROOM_APP_CONTEXT_H_
#define HEADROOM_APP_CONTEXT_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/hardware_catalog.h"
#include "catalog/inference_fits.h"
#include "catalog/mig_catalogs.h"
#include "core/result.h"
#include "core/time.h"
#include "gpu/device.h"
#include "gpu/mig_view.h"
#include "mig/profile.h"
#include "report/result_dir.h"

namespace headroom::app {

// Which GPUs a command works on (`--backend`, `--sim-*`, `--gpus`).
struct BackendOptions {
  std::string backend = "sim";
  std::string sim_gpu = "a100-80gb-sxm";
  int sim_count = 8;
  std::string sim_load = "idle";
  std::string gpus;  // comma-separated indices or UUIDs; empty: all (or CUDA_VISIBLE_DEVICES)
};

// The hardware catalog: the built-in one when `catalog_dir` is empty (--catalog).
[[nodiscard]] core::Result<catalog::HardwareCatalog> LoadCatalog(const std::string& catalog_dir);

// `--engine NAME` / `--engine-file PATH`: whose calibration the inference model uses
// (data/fits/, or a file `headroom model fit --write` made).
struct EngineOptions {
  std::string engine;
  std::string engine_file;
};

struct EngineChoice {
  catalog::EngineCatalog engines;  // the built-in ones, plus --engine-file's
  std::string engine;              // --engine, --engine-file's engine, or the fallback
};

// Errors name the flag.
[[nodiscard]] core::Result<EngineChoice> LoadEngines(const EngineOptions& options,
                                                     std::string_view fallback);

struct DeviceSet {
  std::vector<std::unique_ptr<gpu::Device>> devices;
  std::string backend;
};

// The MIG entry of `gpu` (`--gpu`), by MIG-catalog name or alias, or by a hardware-catalog alias;
// errors name --gpu.
[[nodiscard]] core::Result<mig::GpuMigSpec> FindMigGpu(const std::string& catalog_dir,
                                                       const std::string& gpu);

// The MIG entry of a device's GPU type (its DeviceInfo::catalog_type); kNotFound naming the GPU
// when it is not in the catalogs.
[[nodiscard]] core::Result<mig::GpuMigSpec> MigSpecOfDevice(const std::string& catalog_dir,
                                                            const gpu::Device& device);

// MigSpecOfDevice as the lookup gpu/mig_view asks; it keeps a copy of `catalog_dir`.
gpu::MigSpecLookup MigSpecLookupOf(const std::string& catalog_dir);

// The MIG slice model's catalogs beside LoadCatalog's hardware catalog.
[[nodiscard]] core::Result<catalog::MigCatalogs> LoadMigCatalogs(const std::string& catalog_dir);

// catalogs.Model(gpu, power_limit_w), its error naming --power-limit or --gpu.
[[nodiscard]] core::Result<mig::SliceModel> MigModelOf(const catalog::MigCatalogs& catalogs,
                                                       const std::string& gpu,
                                                       std::optional<double> power_limit_w);

// Opens the selected backend's devices, reading time from `clock` (sim backend).
// REQUIRES: clock outlives the devices.
[[nodiscard]] core::Result<DeviceSet> OpenDevices(const std::string& catalog_dir,
                                                  const BackendOptions& options,
                                                  core::Clock* clock);

// `--sm-clocks` and `--power-limits` values ("1110:1410:75" or "250,300"), each checked against
// the GPU's range (kOutOfRange naming the flag, value and range); clocks snapped to the grid.
[[nodiscard]] core::Result<std::vector<core::Megahertz>> ParseClockList(const std::string& text,
                                                                        const model::GpuSpec& spec);
[[nodiscard]] core::Result<std::vector<core::Watts>> ParsePowerLimitList(
    const std::string& text, const model::GpuSpec& spec);

// A --threads value: itself when given (> 0), else every core.
int ThreadsOrCores(int threads);

// Writes DIR's report.html (report::WriteResultReport), gives each warning (a plot gnuplot could
// not render) to `on_warning`, and returns its path.
[[nodiscard]] core::Result<std::string> WriteReport(
    report::ResultKind kind, const std::string& dir,
    const std::function<void(const std::string&)>& on_warning);

}  // namespace headroom::app

#endif  // HEADROOM_APP_CONTEXT_H_
