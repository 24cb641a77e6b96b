// `headroom characterize`: sweeps SM clock locks and power limits over workload shapes on the
// simulated GPU, writes results.csv and a summary, and names the best setting under a latency SLO.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "app/command_sweep.h"
#include "catalog/inference_fits.h"
#include "catalog/model_catalog.h"
#include "catalog/training_catalog.h"
#include "cli/commands.h"
#include "console/terminal.h"
#include "core/parse.h"
#include "report/characterize_dir.h"
#include "report/result_dir.h"
#include "sim/characterize.h"

namespace headroom::cli {
namespace {

using json = nlohmann::ordered_json;

// Where `characterize --report` writes when no --out is given.
constexpr const char* kDefaultCharacterizeDir = "headroom-characterize";

struct CharacterizeOptions {
  std::string workload = "inference";
  std::string model = "llama2-70b";
  std::string gpu = "a100-80gb-sxm";
  int tp = 8;
  std::string sm_clocks;
  std::string power_limits;
  std::string prompts = "256,1024,8192";
  std::string batches = "1,8";
  int output = 128;
  int iterations = 5;
  std::string out;
  std::string slo = "5%";
  std::string interval = "10ms";
  EngineOptions engine;
  bool json = false;
  bool report = false;
  BackendOptions backend;            // command mode only
  std::vector<std::string> command;  // after --: run it under each setting
};

core::Result<std::vector<sim::Setting>> Settings(const model::GpuSpec& gpu,
                                                 const CharacterizeOptions& o) {
  std::vector<core::Megahertz> clocks;
  std::vector<core::Watts> limits;
  if (!o.sm_clocks.empty()) {
    HEADROOM_ASSIGN_OR_RETURN(clocks, app::ParseClockList(o.sm_clocks, gpu));
  }
  if (!o.power_limits.empty()) {
    HEADROOM_ASSIGN_OR_RETURN(limits, app::ParsePowerLimitList(o.power_limits, gpu));
  }
  return sim::SweepSettings(clocks, limits);
}

// "5%" or "5": the largest acceptable latency increase, in percent.
core::Result<double> ParseSloPercent(const std::string& text) {
  auto slo = core::ParsePercent(text);
  if (!slo || *slo < 0) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--slo '{}' is not a latency increase such as 5%", text)));
  }
  return *slo;
}

int RunCommandSweep(const GlobalOptions& global, const CharacterizeOptions& o, double slo) {
  if (o.backend.backend == "nvml" && geteuid() != 0) {
    return ReportError(core::Error::PermissionDenied(
        "characterize -- CMD changes GPU power limits and clocks: run it as root (it restores "
        "every GPU's settings afterwards)"));
  }
  auto interval = core::ParseDuration(o.interval);
  if (!interval) return ReportError(interval.error().WithContext("--interval"));
  core::SystemClock clock;
  auto set = app::OpenDevices(global.catalog_dir, o.backend, &clock);
  if (!set) return ReportError(set.error());
  std::vector<gpu::Device*> devices;
  for (auto& d : set->devices) devices.push_back(d.get());
  auto bounds = app::DeviceSweepBounds(*devices.front());
  if (!bounds) return ReportError(bounds.error());
  auto settings = Settings(*bounds, o);
  if (!settings) return ReportError(settings.error());
  auto runs =
      app::RunCommandSweep(devices, &clock, *settings,
                           {.command = o.command,
                            .interval = *interval,
                            .stop = &StopRequested(),
                            .note = [](const std::string& text) { PrintNote(text); },
                            .on_warning = [](const std::string& text) { PrintWarning(text); }});
  if (!runs) return ReportError(runs.error());
  const std::optional<size_t> best = sim::BestCommandRun(*runs, slo / 100.0);
  const json out = report::CommandSweepJson(o.command, set->backend, *runs, best);
  if (!o.out.empty()) {
    if (auto st = report::WriteCommandSweepDir(o.out, *runs, out); !st) {
      return ReportError(st.error());
    }
  }
  std::cout << (o.json ? out.dump(2) + "\n"
                       : report::CommandSweepText(*runs, best, slo, StdoutStyle()));
  return kExitOk;
}

// The shapes of --prompts x --batches, batch-major.
core::Result<std::vector<sim::InferenceCase>> InferenceCases(const CharacterizeOptions& o) {
  auto prompts = core::ParseCountList(o.prompts);
  if (!prompts) return core::Fail(prompts.error().WithContext("--prompts"));
  auto batches = core::ParseCountList(o.batches);
  if (!batches) return core::Fail(batches.error().WithContext("--batches"));
  return sim::InferenceGrid(o.tp, *batches, *prompts, o.output);
}

// The simulated sweep of --workload --model on `gpu` with its fitted efficiency.
core::Result<sim::SimulatedSweep> SimulateSweep(const model::GpuSpec& gpu,
                                                const model::InferenceEfficiency& efficiency,
                                                const CharacterizeOptions& o,
                                                const std::vector<sim::Setting>& settings,
                                                const sim::SweepOptions& options) {
  const model::GpuPowerModel gpu_model(gpu);
  if (o.workload == "inference") {
    HEADROOM_ASSIGN_OR_RETURN(auto models, catalog::ModelCatalog::Embedded());
    auto spec = models.Model(o.model);
    if (!spec) return core::Fail(spec.error().WithContext("--model"));
    HEADROOM_ASSIGN_OR_RETURN(auto cases, InferenceCases(o));
    return sim::SweepInference(model::InferenceModel(**spec, gpu_model, efficiency), settings,
                               cases, options);
  }
  HEADROOM_ASSIGN_OR_RETURN(auto workloads, catalog::TrainingCatalog::Embedded());
  auto w = workloads.Workload(o.model);
  if (!w) return core::Fail(w.error().WithContext("--model"));
  return sim::SweepTraining(model::TrainingModel(*w, gpu_model, efficiency), settings, o.iterations,
                            options);
}

// Writes --out DIR (and its report with --report); the report's path, if one was written.
core::Result<std::optional<std::string>> WriteOut(const std::string& dir,
                                                  const sim::SimulatedSweep& sweep,
                                                  const json& summary,
                                                  const CharacterizeOptions& o) {
  HEADROOM_RETURN_IF_ERROR(
      report::WriteCharacterizeDir(dir, sweep, summary, o.workload == "inference"));
  if (!o.report) return std::optional<std::string>();
  HEADROOM_ASSIGN_OR_RETURN(std::string path, WriteReport(report::ResultKind::kCharacterize, dir));
  return std::optional<std::string>(path);
}

int RunCharacterize(const GlobalOptions& global, const CharacterizeOptions& o) {
  auto hardware = app::LoadCatalog(global.catalog_dir);
  if (!hardware) return ReportError(hardware.error());
  auto gpu = hardware->Gpu(o.gpu);
  if (!gpu) return ReportError(gpu.error().WithContext("--gpu"));
  auto engines = app::LoadEngines(o.engine, catalog::kDefaultEngine);
  if (!engines) return ReportError(engines.error());
  auto fits = engines->engines.Engine(engines->engine);
  if (!fits) return ReportError(fits.error());
  auto fit = (*fits)->For((*gpu)->name);
  if (!fit) return ReportError(fit.error().WithContext("--gpu"));
  auto settings = Settings(**gpu, o);
  if (!settings) return ReportError(settings.error());
  auto interval = core::ParseDuration(o.interval);
  if (!interval) return ReportError(interval.error().WithContext("--interval"));
  auto slo = ParseSloPercent(o.slo);
  if (!slo) return ReportError(slo.error());
  if (!o.command.empty()) {
    if (o.report) {
      return ReportError(core::Error::InvalidArgument(
          "--report: only the simulated sweep has a report; a command's sweep writes "
          "results.csv and summary.json with --out"));
    }
    return RunCommandSweep(global, o, *slo);
  }
  const std::string out_dir = o.out.empty() && o.report ? kDefaultCharacterizeDir : o.out;
  auto sweep = SimulateSweep(
      **gpu, fit->efficiency, o, *settings,
      {.slo_fraction = *slo / 100.0, .interval = *interval, .traces = !out_dir.empty()});
  if (!sweep) return ReportError(sweep.error());
  const report::CharacterizeInputs inputs{
      .workload = o.workload,
      .model = o.model,
      .gpu = (*gpu)->name,
      .engine = o.workload == "inference" ? (*fits)->Label() : "",
      .tp = o.tp,
      .prompts = o.prompts,
      .batches = o.batches,
      .output = o.output,
      .iterations = o.iterations,
      .interval = o.interval,
      .slo_fraction = *slo / 100.0,
      .version = HEADROOM_VERSION};
  const json summary = report::CharacterizeSummaryJson(inputs, *sweep);
  std::optional<std::string> report_path;
  if (!out_dir.empty()) {
    auto written = WriteOut(out_dir, *sweep, summary, o);
    if (!written) return ReportError(written.error());
    report_path = *written;
  }
  return PrintResult(
      {.json = o.json,
       .json_text = summary.dump(2),
       .text = report::CharacterizeText(inputs, *sweep, *slo, StdoutStyle()),
       .wrote = out_dir.empty()
                    ? ""
                    : fmt::format("Wrote {}/{}, {} and {}\n", out_dir, report::kResultsFile,
                                  report::kCharacterizeSummaryFile, report::kPowerTraceFile),
       .report = report_path});
}

}  // namespace

void RegisterCharacterize(CLI::App& app, const GlobalOptions& global, RunFunction* run) {
  CLI::App* cmd = app.add_subcommand(
      "characterize", "Sweep SM clocks and power limits over workload shapes on a simulated GPU");
  auto* o = OptionsRunBy(cmd, run, global, RunCharacterize);
  cmd->add_option("--workload", o->workload, "inference or training")
      ->check(CLI::IsMember({"inference", "training"}))
      ->capture_default_str();
  cmd->add_option("--model", o->model, "Model (inference) or training workload")
      ->capture_default_str();
  cmd->add_option("--gpu", o->gpu, "GPU type")->capture_default_str();
  cmd->add_option("--tp", o->tp, "Tensor parallelism (inference)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--sm-clocks", o->sm_clocks,
                  "Clock locks to try, MHz: START:STOP:STEP or a list");
  cmd->add_option("--power-limits", o->power_limits,
                  "Power limits to try, W: START:STOP:STEP or a list");
  cmd->add_option("--prompts", o->prompts, "Prompt lengths (inference)")->capture_default_str();
  cmd->add_option("--batches", o->batches, "Batch sizes (inference)")->capture_default_str();
  cmd->add_option("--output", o->output, "Output tokens per request (inference)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_option("--iterations", o->iterations, "Iterations per run (training)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--interval", o->interval, "Telemetry sampling interval (virtual time)")
      ->capture_default_str();
  cmd->add_option("--out", o->out,
                  "Write results.csv, summary.json (and for the simulated sweep power-trace.csv) "
                  "into this directory");
  cmd->add_flag("--report", o->report,
                fmt::format("Also write report.html (self-contained HTML, plots inline) into --out "
                            "(default {}/) and print its path",
                            kDefaultCharacterizeDir));
  cmd->add_option("--slo", o->slo, "Largest acceptable latency increase, e.g. 5%")
      ->capture_default_str();
  AddEngineOptions(cmd, &o->engine);
  cmd->add_flag("--json", o->json, "Print the summary as JSON");
  AddBackendOptions(cmd, &o->backend);
  cmd->add_option("command", o->command,
                  "With a command after --: run it under each setting on the --backend GPUs "
                  "(nvml needs root; every GPU's settings are restored afterwards)")
      ->expected(-1);
}

}  // namespace headroom::cli
