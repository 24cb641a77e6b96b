// What every subcommand shares: global flags, backend selection (the composition root picks
// the Device implementation), exit codes, and error printing. Not thread-safe (CLI start-up).
#ifndef HEADROOM_CLI_COMMON_H_
#define HEADROOM_CLI_COMMON_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "catalog/hardware_catalog.h"
#include "catalog/inference_fits.h"
#include "catalog/mig_catalogs.h"
#include "console/progress.h"
#include "console/terminal.h"
#include "core/result.h"
#include "core/time.h"
#include "gpu/device.h"
#include "gpu/mig_view.h"
#include "mig/profile.h"
#include "report/result_dir.h"

namespace headroom::cli {

// The console every command prints through (console/terminal.h, console/progress.h).
using console::PrintError;
using console::PrintNote;
using console::PrintNoteOut;
using console::PrintWarning;
using console::ProgressBar;
using console::ProgressWanted;
using console::StdoutStyle;
using console::UseDaemonLogger;

// Exit codes (README): 0 ok, 1 runtime error, 2 usage or input error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRuntime = 1;
inline constexpr int kExitUsage = 2;

struct GlobalOptions {
  std::string catalog_dir;  // empty: the catalog compiled into the binary
  bool verbose = false;
  bool quiet = false;
  std::string color = "auto";  // --color: auto, always or never (console/terminal.h decides)
};

struct BackendOptions {
  std::string backend = "sim";
  std::string sim_gpu = "a100-80gb-sxm";
  int sim_count = 8;
  std::string sim_load = "idle";
  std::string gpus;  // comma-separated indices or UUIDs; empty: all (or CUDA_VISIBLE_DEVICES)
};

void AddBackendOptions(CLI::App* command, BackendOptions* options);

[[nodiscard]] core::Result<catalog::HardwareCatalog> LoadCatalog(const GlobalOptions& global);

// `--engine NAME` / `--engine-file PATH`: whose calibration the inference model uses
// (data/fits/, or a file `headroom model fit --write` made).
struct EngineOptions {
  std::string engine;
  std::string engine_file;
};

void AddEngineOptions(CLI::App* command, EngineOptions* options);

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
[[nodiscard]] core::Result<mig::GpuMigSpec> FindMigGpu(const GlobalOptions& global,
                                                       const std::string& gpu);

// The MIG entry of a device's GPU type (its DeviceInfo::catalog_type); kNotFound naming the GPU
// when it is not in the catalogs.
[[nodiscard]] core::Result<mig::GpuMigSpec> MigSpecOfDevice(const GlobalOptions& global,
                                                            const gpu::Device& device);

// MigSpecOfDevice as the lookup gpu/mig_view asks; `global` must outlive it.
gpu::MigSpecLookup MigSpecLookupOf(const GlobalOptions& global);

// The MIG slice model's catalogs beside LoadCatalog's hardware catalog.
[[nodiscard]] core::Result<catalog::MigCatalogs> LoadMigCatalogs(const GlobalOptions& global);

// catalogs.Model(gpu, power_limit_w), its error naming --power-limit or --gpu.
[[nodiscard]] core::Result<mig::SliceModel> MigModelOf(const catalog::MigCatalogs& catalogs,
                                                       const std::string& gpu,
                                                       std::optional<double> power_limit_w);

// Opens the selected backend's devices, reading time from `clock` (sim backend).
// REQUIRES: clock outlives the devices.
[[nodiscard]] core::Result<DeviceSet> OpenDevices(const GlobalOptions& global,
                                                  const BackendOptions& options,
                                                  core::Clock* clock);

// `--sm-clocks` and `--power-limits` values ("1110:1410:75" or "250,300"), each checked against
// the GPU's range (kOutOfRange naming the flag, value and range); clocks snapped to the grid.
[[nodiscard]] core::Result<std::vector<core::Megahertz>> ParseClockList(const std::string& text,
                                                                        const model::GpuSpec& spec);
[[nodiscard]] core::Result<std::vector<core::Watts>> ParsePowerLimitList(
    const std::string& text, const model::GpuSpec& spec);

// Writes DIR's report.html (report::WriteResultReport), prints its warnings, returns its path.
[[nodiscard]] core::Result<std::string> WriteReport(report::ResultKind kind,
                                                    const std::string& dir);

// What a command that writes a result prints when it is done.
struct ResultOutput {
  bool json = false;  // --json: `json_text` instead of `text`
  std::string json_text = {};
  std::string text = {};
  std::string wrote = {};  // after the text, what was written (a note: nothing under --quiet)
  std::optional<std::string> report = {};  // report.html's path: after the text, or on stderr
};
// Prints `output`; kExitOk.
int PrintResult(const ResultOutput& output);

// Prints "headroom: <message>" on stderr (PrintError) and returns the exit code for the error.
int ReportError(const core::Error& error);

// Set by SIGINT/SIGTERM; long-running commands poll it and stop cleanly.
std::atomic<bool>& StopRequested();
void InstallStopHandlers();

}  // namespace headroom::cli

#endif  // HEADROOM_CLI_COMMON_H_
