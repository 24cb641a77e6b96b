#include "cli/common.h"

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "console/terminal.h"
#include "core/parse.h"

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

namespace {}  // namespace

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

core::Result<std::string> WriteReport(report::ResultKind kind, const std::string& dir) {
  return app::WriteReport(kind, dir, PrintWarning);
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

std::atomic<bool>& StopRequested() {
  static std::atomic<bool> stop{false};
  return stop;
}

std::atomic<bool>& StopInsisted() {
  static std::atomic<bool> again{false};
  return again;
}

namespace {
// Lock-free atomics only: async-signal-safe.
extern "C" void OnStopSignal(int) {
  if (StopRequested().exchange(true)) StopInsisted().store(true);
}
}  // namespace

void InstallStopHandlers() {
  std::signal(SIGINT, OnStopSignal);
  std::signal(SIGTERM, OnStopSignal);
}

}  // namespace headroom::cli
