#include "app/characterize.h"

#include <fmt/format.h>
#include <unistd.h>

#include "app/command_sweep.h"
#include "catalog/model_catalog.h"
#include "catalog/training_catalog.h"
#include "core/parse.h"

namespace headroom::app {
namespace {

core::Result<std::vector<sim::Setting>> Settings(const model::GpuSpec& gpu,
                                                 const CharacterizeRequest& r) {
  std::vector<core::Megahertz> clocks;
  std::vector<core::Watts> limits;
  if (!r.sm_clocks.empty()) {
    HEADROOM_ASSIGN_OR_RETURN(clocks, ParseClockList(r.sm_clocks, gpu));
  }
  if (!r.power_limits.empty()) {
    HEADROOM_ASSIGN_OR_RETURN(limits, ParsePowerLimitList(r.power_limits, gpu));
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

core::Result<CharacterizeResult> SweepCommand(const CharacterizeRequest& r, double slo,
                                              core::Duration interval) {
  if (r.backend.backend == "nvml" && geteuid() != 0) {
    return core::Fail(core::Error::PermissionDenied(
        "characterize -- CMD changes GPU power limits and clocks: run it as root (it restores "
        "every GPU's settings afterwards)"));
  }
  core::SystemClock clock;
  HEADROOM_ASSIGN_OR_RETURN(DeviceSet set, OpenDevices(r.catalog_dir, r.backend, &clock));
  std::vector<gpu::Device*> devices;
  for (auto& d : set.devices) devices.push_back(d.get());
  HEADROOM_ASSIGN_OR_RETURN(const model::GpuSpec bounds, DeviceSweepBounds(*devices.front()));
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<sim::Setting> settings, Settings(bounds, r));
  CharacterizeResult result{.slo_percent = slo};
  HEADROOM_ASSIGN_OR_RETURN(result.runs, RunCommandSweep(devices, &clock, settings,
                                                         {.command = r.command,
                                                          .interval = interval,
                                                          .stop = r.stop,
                                                          .note = r.note,
                                                          .on_warning = r.on_warning}));
  result.best = sim::BestCommandRun(result.runs, slo / 100.0);
  result.summary = report::CommandSweepJson(r.command, set.backend, result.runs, result.best);
  if (!r.out.empty()) {
    HEADROOM_RETURN_IF_ERROR(report::WriteCommandSweepDir(r.out, result.runs, result.summary));
  }
  return result;
}

// The shapes of --prompts x --batches, batch-major.
core::Result<std::vector<sim::InferenceCase>> InferenceCases(const CharacterizeRequest& r) {
  auto prompts = core::ParseCountList(r.prompts);
  if (!prompts) return core::Fail(prompts.error().WithContext("--prompts"));
  auto batches = core::ParseCountList(r.batches);
  if (!batches) return core::Fail(batches.error().WithContext("--batches"));
  return sim::InferenceGrid(r.tp, *batches, *prompts, r.output);
}

// The simulated sweep of --workload --model on `gpu` with its fitted efficiency.
core::Result<sim::SimulatedSweep> SimulateSweep(const model::GpuSpec& gpu,
                                                const model::InferenceEfficiency& efficiency,
                                                const CharacterizeRequest& r,
                                                const std::vector<sim::Setting>& settings,
                                                const sim::SweepOptions& options) {
  const model::GpuPowerModel gpu_model(gpu);
  if (r.workload == "inference") {
    HEADROOM_ASSIGN_OR_RETURN(auto models, catalog::ModelCatalog::Embedded());
    auto spec = models.Model(r.model);
    if (!spec) return core::Fail(spec.error().WithContext("--model"));
    HEADROOM_ASSIGN_OR_RETURN(auto cases, InferenceCases(r));
    return sim::SweepInference(model::InferenceModel(**spec, gpu_model, efficiency), settings,
                               cases, options);
  }
  HEADROOM_ASSIGN_OR_RETURN(auto workloads, catalog::TrainingCatalog::Embedded());
  auto w = workloads.Workload(r.model);
  if (!w) return core::Fail(w.error().WithContext("--model"));
  return sim::SweepTraining(model::TrainingModel(*w, gpu_model, efficiency), settings, r.iterations,
                            options);
}

// Writes the directory (and its report when asked) of a simulated sweep.
core::Status WriteOut(const CharacterizeRequest& r, CharacterizeResult& result) {
  HEADROOM_RETURN_IF_ERROR(report::WriteCharacterizeDir(result.out_dir, *result.sweep,
                                                        result.summary, r.workload == "inference"));
  if (!r.report) return core::Ok();
  HEADROOM_ASSIGN_OR_RETURN(
      result.report, WriteReport(report::ResultKind::kCharacterize, result.out_dir, r.on_warning));
  return core::Ok();
}

}  // namespace

core::Result<CharacterizeResult> Characterize(const CharacterizeRequest& r) {
  HEADROOM_ASSIGN_OR_RETURN(catalog::HardwareCatalog hardware, LoadCatalog(r.catalog_dir));
  auto gpu = hardware.Gpu(r.gpu);
  if (!gpu) return core::Fail(gpu.error().WithContext("--gpu"));
  HEADROOM_ASSIGN_OR_RETURN(EngineChoice engines, LoadEngines(r.engine, catalog::kDefaultEngine));
  HEADROOM_ASSIGN_OR_RETURN(const catalog::InferenceFits* fits,
                            engines.engines.Engine(engines.engine));
  auto fit = fits->For((*gpu)->name);
  if (!fit) return core::Fail(fit.error().WithContext("--gpu"));
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<sim::Setting> settings, Settings(**gpu, r));
  auto interval = core::ParseDuration(r.interval);
  if (!interval) return core::Fail(interval.error().WithContext("--interval"));
  HEADROOM_ASSIGN_OR_RETURN(const double slo, ParseSloPercent(r.slo));
  if (!r.command.empty()) {
    if (r.report) {
      return core::Fail(core::Error::InvalidArgument(
          "--report: only the simulated sweep has a report; a command's sweep writes "
          "results.csv and summary.json with --out"));
    }
    return SweepCommand(r, slo, *interval);
  }
  CharacterizeResult result{.slo_percent = slo};
  result.out_dir = r.out.empty() && r.report ? kDefaultCharacterizeDir : r.out;
  HEADROOM_ASSIGN_OR_RETURN(result.sweep, SimulateSweep(**gpu, fit->efficiency, r, settings,
                                                        {.slo_fraction = slo / 100.0,
                                                         .interval = *interval,
                                                         .traces = !result.out_dir.empty()}));
  result.inputs = {.workload = r.workload,
                   .model = r.model,
                   .gpu = (*gpu)->name,
                   .engine = r.workload == "inference" ? fits->Label() : "",
                   .tp = r.tp,
                   .prompts = r.prompts,
                   .batches = r.batches,
                   .output = r.output,
                   .iterations = r.iterations,
                   .interval = r.interval,
                   .slo_fraction = slo / 100.0,
                   .version = r.version};
  result.summary = report::CharacterizeSummaryJson(result.inputs, *result.sweep);
  if (!result.out_dir.empty()) HEADROOM_RETURN_IF_ERROR(WriteOut(r, result));
  return result;
}

}  // namespace headroom::app
