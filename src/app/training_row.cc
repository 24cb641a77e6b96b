#include "app/training_row.h"

#include <filesystem>

#include <fmt/format.h>

#include "app/context.h"
#include "catalog/inference_fits.h"
#include "catalog/training_catalog.h"
#include "core/files.h"
#include "report/training_row_html.h"
#include "report/training_row_report.h"
#include "sim/scenario.h"

namespace headroom::app {
namespace {

sim::TrainingRowConfig ConfigOf(const sim::TrainingScenario& s, const model::ServerSpec& server,
                                const model::GpuSpec& gpu) {
  return {.servers = s.servers,
          .gpus_per_server = server.gpus_per_server,
          .step = s.step,
          .duration = s.duration,
          .checkpoint_every = s.checkpoint_every,
          .checkpoint_for = s.checkpoint_for,
          .checkpoint_w = gpu.idle_power.value(),
          .skew = s.skew,
          .non_gpu_idle_w =
              model::NonGpuPower(server, gpu, gpu.idle_power * server.gpus_per_server).value(),
          .non_gpu_slope = model::NonGpuSlope(server, gpu),
          .gpu_idle_w = gpu.idle_power.value(),
          .ramp_window = s.ramp_window,
          .seed = s.seed};
}

sim::TrainingRowRun RunMitigation(const sim::Mitigation& m, const sim::TrainingRowConfig& config,
                                  const model::TrainingModel& training) {
  const model::GpuSpec& gpu = training.gpu().spec();
  const core::Megahertz clock = m.kind == sim::MitigationKind::kClockLock
                                    ? gpu.SnapClock(core::Megahertz(m.clock_mhz))
                                    : gpu.sm_clock_max;
  const sim::IterationProfile profile = sim::ProfileAtClock(training, clock);
  if (m.kind != sim::MitigationKind::kPowerSmoothing) {
    return sim::SimulateTrainingRow(config, profile, nullptr);
  }
  const sim::PowerSmoothing smoothing{.floor_w = gpu.tdp.value() * m.floor_pct / 100,
                                      .ramp_up_w_per_s = m.ramp_up_w_per_s,
                                      .ramp_down_w_per_s = m.ramp_down_w_per_s,
                                      .ramp_down_hysteresis = m.ramp_down_hysteresis};
  return sim::SimulateTrainingRow(config, profile, &smoothing);
}

core::Result<sim::TrainingScenario> LoadTraining(const TrainingRowRequest& r,
                                                 const catalog::HardwareCatalog& hardware) {
  HEADROOM_ASSIGN_OR_RETURN(sim::ScenarioFile file, sim::ReadScenarioFile(r.scenario));
  HEADROOM_ASSIGN_OR_RETURN(catalog::TrainingCatalog workloads,
                            catalog::TrainingCatalog::Embedded());
  HEADROOM_ASSIGN_OR_RETURN(
      sim::TrainingScenario s,
      sim::ParseTrainingScenario(file.text, file.source, hardware, workloads));
  if (r.servers > 0) {
    if (r.servers > sim::kMaxTrainingServers ||
        r.servers * static_cast<double>(s.duration / s.step) > sim::kMaxTrainingServerSteps) {
      return core::Fail(core::Error::InvalidArgument(fmt::format(
          "--servers {}: at most {} servers, and {:g} server-steps over the scenario's duration",
          r.servers, sim::kMaxTrainingServers, sim::kMaxTrainingServerSteps)));
    }
    s.servers = r.servers;
  }
  if (r.seed) s.seed = *r.seed;
  return s;
}

core::Status WriteTrainingOut(const std::string& dir, const TrainingRowResult& result) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("--out {}: cannot write there: {}", dir, ec.message())));
  }
  HEADROOM_RETURN_IF_ERROR(core::WriteFileAtomically(dir + "/" + report::kTrainingRowFile,
                                                     result.summary.dump(2) + "\n"));
  return core::WriteFileAtomically(dir + "/" + report::kTrainingPowerFile,
                                   report::TrainingPowerCsv(result.verdict));
}

}  // namespace

bool IsTrainingRowScenario(const std::string& name_or_path) {
  auto file = sim::ReadScenarioFile(name_or_path);
  if (!file) return false;
  auto kind = sim::ScenarioKindOf(file->text, file->source);
  return kind && *kind == sim::kTrainingRowKind;
}

core::Result<TrainingRowResult> SimulateTrainingRow(const TrainingRowRequest& r) {
  HEADROOM_ASSIGN_OR_RETURN(catalog::HardwareCatalog hardware, LoadCatalog(r.catalog_dir));
  HEADROOM_ASSIGN_OR_RETURN(sim::TrainingScenario s, LoadTraining(r, hardware));
  HEADROOM_ASSIGN_OR_RETURN(const model::ServerSpec* server, hardware.Server(s.server));
  HEADROOM_ASSIGN_OR_RETURN(const model::GpuSpec* gpu, hardware.Gpu(server->gpu));
  HEADROOM_ASSIGN_OR_RETURN(catalog::EngineCatalog engines, catalog::EngineCatalog::Embedded());
  HEADROOM_ASSIGN_OR_RETURN(const catalog::InferenceFits* fits,
                            engines.Engine(catalog::kDefaultEngine));
  HEADROOM_ASSIGN_OR_RETURN(catalog::GpuFit fit, fits->For(gpu->name));
  HEADROOM_ASSIGN_OR_RETURN(catalog::TrainingCatalog workloads,
                            catalog::TrainingCatalog::Embedded());
  HEADROOM_ASSIGN_OR_RETURN(model::TrainingWorkload workload, workloads.Workload(s.workload));
  // The efficiency `characterize --workload training` uses: the default engine's fit on this GPU.
  const model::TrainingModel training(workload, model::GpuPowerModel(*gpu), fit.efficiency);
  const sim::TrainingRowConfig config = ConfigOf(s, *server, *gpu);
  TrainingRowResult result;
  result.verdict = {.scenario = s, .gpu = gpu->name, .gpu_tdp_w = gpu->tdp.value()};
  for (const sim::Mitigation& m : s.mitigations) {
    result.verdict.outcomes.push_back({.mitigation = m, .run = RunMitigation(m, config, training)});
  }
  sim::Judge(result.verdict);
  result.summary = report::TrainingRowJson(result.verdict, r.version);
  result.out_dir = r.out.empty() && r.report ? "headroom-training" : r.out;
  if (!result.out_dir.empty()) HEADROOM_RETURN_IF_ERROR(WriteTrainingOut(result.out_dir, result));
  if (r.report) {
    HEADROOM_ASSIGN_OR_RETURN(
        format::WrittenReport page,
        report::WriteTrainingRowReport(result.out_dir, result.verdict, r.version));
    for (const std::string& w : page.warnings) {
      if (r.on_warning) r.on_warning(w);
    }
    result.report = page.path;
  }
  return result;
}

}  // namespace headroom::app
