#include "catalog/validation_sets.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "catalog/embedded_data.h"
#include "catalog/mig_scaling_validation.h"
#include "catalog/served_runs.h"
#include "catalog/serving_energy_validation.h"
#include "core/parse.h"
#include "model/engine_fit.h"
#include "model/training_model.h"

namespace headroom::catalog {
namespace {

core::Result<model::Measurement> ParseRow(const core::CsvRow& f) {
  HEADROOM_ASSIGN_OR_RETURN(model::Measurement m, MeasuredConfiguration(f));
  HEADROOM_ASSIGN_OR_RETURN(m.batch, ValidationCount(f.Text("batch"), "batch", 1));
  HEADROOM_ASSIGN_OR_RETURN(m.input, ValidationCount(f.Text("input_tokens"), "input_tokens", 1));
  HEADROOM_ASSIGN_OR_RETURN(m.output, ValidationCount(f.Text("output_tokens"), "output_tokens", 0));
  const auto metric = model::MetricFromName(f.Text("metric"));
  if (!metric || model::IsServedRunMetric(*metric)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("metric '{}' is not one of prefill_ms, decode_ms, e2e_s, gpu_power_w, "
                    "j_per_token, tpot_ms (a served run's metrics, with its requests, belong in "
                    "serving.csv)",
                    f.Text("metric"))));
  }
  m.metric = *metric;
  HEADROOM_ASSIGN_OR_RETURN(m.value, ValidationNumber(f.Text("value"), "value"));
  auto tail = core::ParseDouble(f.Text("idle_tail_s"));
  if (!tail || *tail < 0 || *tail > 3600) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "idle_tail_s '{}' is not a number of seconds in [0, 3600]", f.Text("idle_tail_s"))));
  }
  m.idle_tail_s = *tail;
  if ((m.metric == model::Metric::kDecodeMs || m.metric == model::Metric::kEndToEndS ||
       m.metric == model::Metric::kJoulesPerToken || m.metric == model::Metric::kServingTpotMs) &&
      m.output < 1) {
    return core::Fail(
        core::Error::InvalidArgument(fmt::format("{} needs output_tokens >= 1", f.Text("metric"))));
  }
  m.source = std::string(f.Text("source"));
  return m;
}

struct Resolved {
  const model::ModelSpec* spec = nullptr;
  const model::GpuSpec* gpu = nullptr;
};

// The row's model and GPU, or why it cannot be scored.
std::variant<Resolved, std::string> ResolveRow(const ValidationCatalogs& c,
                                               const model::Measurement& m) {
  auto spec = c.models->Model(m.model);
  if (!spec) return fmt::format("model {} is not catalogued", m.model);
  auto gpu = c.hardware->Gpu(m.gpu);
  if (!gpu) return fmt::format("GPU type {} is not catalogued", m.gpu);
  if ((*spec)->heads % m.tp != 0) return fmt::format("tp {} does not divide the heads", m.tp);
  return Resolved{*spec, *gpu};
}

struct CellKey {
  std::string dataset;
  model::Metric metric;
  auto operator<=>(const CellKey&) const = default;
};

}  // namespace

bool IsScoredOnEveryRow(std::string_view engine) {
  return std::find(std::begin(kEnginesScoredOnEveryRow), std::end(kEnginesScoredOnEveryRow),
                   engine) != std::end(kEnginesScoredOnEveryRow);
}

core::Result<model::Measurement> MeasuredConfiguration(const core::CsvRow& f) {
  model::Measurement m;
  m.dataset = std::string(f.Text("dataset"));
  m.engine = std::string(f.Text("engine"));
  m.model = std::string(f.Text("model"));
  m.gpu = std::string(f.Text("gpu"));
  HEADROOM_ASSIGN_OR_RETURN(m.tp, ValidationCount(f.Text("tp"), "tp", 1));
  return m;
}

core::Result<int> ValidationCount(std::string_view text, std::string_view name, int min) {
  auto v = core::ParseInteger(text);
  if (!v || *v < min || *v > (1 << 24)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} '{}' is not a whole number of at least {}", name, text, min)));
  }
  return static_cast<int>(*v);
}

core::Result<double> ValidationNumber(std::string_view text, std::string_view name, double max) {
  auto v = core::ParseDouble(text);
  if (!v || !(*v > 0) || !(*v <= max)) {
    return core::Fail(core::Error::InvalidArgument(
        max < std::numeric_limits<double>::max()
            ? fmt::format("{} '{}' is not a positive number up to {}", name, text, max)
            : fmt::format("{} '{}' is not a positive number", name, text)));
  }
  return *v;
}

std::variant<double, std::string> PredictRow(const ValidationCatalogs& c,
                                             const InferenceFits& engine,
                                             const model::Measurement& m) {
  const auto resolved = ResolveRow(c, m);
  if (const auto* why = std::get_if<std::string>(&resolved)) return *why;
  const Resolved& r = std::get<Resolved>(resolved);
  auto fit = engine.For(r.gpu->name);
  if (!fit) return fmt::format("no calibration for {}", r.gpu->name);
  const model::InferenceModel im(*r.spec, model::GpuPowerModel(*r.gpu), fit->efficiency);
  if (!model::FitsInMemory(im, m)) {
    return std::string("the batch's KV cache does not fit in memory (the engine queued it)");
  }
  return model::Predict(im, m);
}

core::Result<const core::EmbeddedFile*> EmbeddedValidationFile(std::string_view name) {
  for (const core::EmbeddedFile& f : EmbeddedValidationFiles()) {
    const std::string_view path(f.path);
    if (path.ends_with(name) && path.size() > name.size() &&
        path[path.size() - name.size() - 1] == '/') {
      return &f;
    }
  }
  return core::Fail(core::Error::Internal(fmt::format("data/validation/{} is not built in", name)));
}

void ScoreRows(const ValidationCatalogs& c, const InferenceFits& engine,
               const std::vector<model::Measurement>& rows,
               const std::function<bool(const model::Measurement&)>& fitted_on, int worst,
               ValidationReport* out, const RowPredictor& predict) {
  std::map<CellKey, ValidationCell> cells;
  std::map<std::string, int> skipped;
  for (const model::Measurement& m : rows) {
    ValidationCell& cell = cells[{m.dataset, m.metric}];
    cell.engine = engine.engine();
    cell.dataset = m.dataset;
    cell.metric = m.metric;
    cell.own_engine = m.engine == engine.engine();
    if (fitted_on(m)) {
      ++cell.calibration_rows;
      continue;
    }
    const auto predicted = predict ? predict(engine, m) : PredictRow(c, engine, m);
    if (const auto* why = std::get_if<std::string>(&predicted)) {
      ++skipped[*why];
      continue;
    }
    const double error = std::get<double>(predicted) / m.value - 1.0;
    ++cell.rows;
    cell.mape += std::abs(error);
    cell.bias += error;
    cell.worst.push_back({m, std::get<double>(predicted), error});
  }
  for (auto& [key, cell] : cells) {
    model::FinishErrorSums(&cell, worst);
    out->cells.push_back(std::move(cell));
  }
  for (const auto& [reason, n] : skipped) out->skipped.push_back({engine.engine(), reason, n});
}

core::Result<std::vector<model::Measurement>> ParseInferenceMeasurements(
    std::string_view text, const std::string& source) {
  return ReadValidationRows(text, source,
                            {"dataset", "engine", "model", "gpu", "tp", "batch", "input_tokens",
                             "output_tokens", "metric", "value", "idle_tail_s", "source"},
                            &ParseRow);
}

core::Result<std::vector<model::Measurement>> EmbeddedInferenceMeasurements() {
  HEADROOM_ASSIGN_OR_RETURN(const core::EmbeddedFile* f, EmbeddedValidationFile("inference.csv"));
  HEADROOM_ASSIGN_OR_RETURN(std::vector<model::Measurement> rows,
                            ParseInferenceMeasurements(f->content, std::string(f->path)));
  HEADROOM_ASSIGN_OR_RETURN(std::vector<model::Measurement> runs, EmbeddedServedRuns());
  rows.insert(rows.end(), runs.begin(), runs.end());
  return rows;
}

ValidationReport Validate(const ValidationCatalogs& catalogs,
                          const std::vector<model::Measurement>& rows, int worst,
                          const RowPredictor& predict) {
  ValidationReport out;
  for (const std::string& name : catalogs.engines->Names()) {
    const InferenceFits* engine = *catalogs.engines->Engine(name);
    // The default and the profile engine on every row; the others on their own engine's rows.
    std::vector<model::Measurement> scored = rows;
    if (!IsScoredOnEveryRow(name)) {
      std::erase_if(scored, [&](const model::Measurement& m) { return m.engine != name; });
    }
    ScoreRows(
        catalogs, *engine, scored,
        [engine](const model::Measurement& m) { return engine->IsCalibrationRow(m); }, worst, &out,
        predict);
  }
  return out;
}

namespace {

// One GPU type's fit: a full one, or, for an engine with a base (measured only end to end),
// what serving changes on top of the base engine's kernels there.
core::Result<model::EngineGpuFit> FitGpu(const ValidationCatalogs& catalogs,
                                         const EngineCalibration& calibration,
                                         const model::GpuPowerModel& gpu,
                                         const std::vector<model::Observation>& observations) {
  const std::string& name = gpu.spec().name;
  if (!calibration.base.empty()) {
    HEADROOM_ASSIGN_OR_RETURN(const InferenceFits* base,
                              catalogs.engines->Engine(calibration.base));
    HEADROOM_ASSIGN_OR_RETURN(GpuFit base_fit, base->For(name));
    return model::FitServingEngineOnGpu(gpu, base_fit.efficiency, observations);
  }
  HEADROOM_ASSIGN_OR_RETURN(const InferenceFits* fallback,
                            catalogs.engines->Engine(kProfileEngine));
  HEADROOM_ASSIGN_OR_RETURN(GpuFit default_fit, fallback->For(name));
  return model::FitEngineOnGpu(gpu, observations, default_fit.efficiency.overhead_activity);
}

}  // namespace

core::Result<InferenceFits> FitEngineCalibration(const ValidationCatalogs& catalogs,
                                                 const InferenceFits& engine,
                                                 const std::vector<model::Measurement>& rows) {
  if (!engine.calibration()) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "engine '{}' names no calibration rows of the validation suite", engine.engine())));
  }
  std::map<std::string, std::vector<model::Observation>> by_gpu;
  for (const model::Measurement& m : rows) {
    if (!engine.IsCalibrationRow(m)) continue;
    const auto resolved = ResolveRow(catalogs, m);
    if (const auto* why = std::get_if<std::string>(&resolved)) {
      return core::Fail(core::Error::InvalidArgument(fmt::format("{}: {}", m.source, *why)));
    }
    const Resolved& r = std::get<Resolved>(resolved);
    by_gpu[r.gpu->name].push_back({r.spec, m});
  }
  InferenceFits out(engine.engine(), engine.description());
  out.SetVersion(engine.version());
  out.SetScheduler(engine.scheduler());
  out.SetCalibration(*engine.calibration());
  const std::string activity_note =
      engine.calibration()->base.empty()
          ? fmt::format("activity from {}", kProfileEngine)
          : fmt::format("activity from {}", engine.calibration()->base);
  for (auto& [gpu_name, observations] : by_gpu) {
    const model::GpuSpec* gpu = *catalogs.hardware->Gpu(gpu_name);
    // Rows whose batch did not fit in memory were queued by the engine: not a static batch.
    const model::GpuPowerModel power_model(*gpu);
    std::erase_if(observations, [&](const model::Observation& o) {
      return !model::FitsInMemory(model::InferenceModel(*o.model, power_model, {}), o.measurement);
    });
    HEADROOM_ASSIGN_OR_RETURN(model::EngineGpuFit fit,
                              FitGpu(catalogs, *engine.calibration(), power_model, observations));
    out.SetFit(gpu_name, fit.efficiency, fit.power_rows > 0 ? "" : activity_note);
  }
  if (by_gpu.empty()) {
    return core::Fail(core::Error::NotFound(fmt::format(
        "the validation suite has no calibration rows for engine '{}'", engine.engine())));
  }
  return out;
}

namespace {

core::Result<TrainingMeasurement> ParseTrainingRow(const core::CsvRow& f) {
  TrainingMeasurement t;
  t.dataset = std::string(f.Text("dataset"));
  model::ModelSpec& m = t.model;
  m.name = std::string(f.Text("model"));
  m.architecture = model::ModelArchitecture::kDecoder;
  HEADROOM_ASSIGN_OR_RETURN(m.layers, ValidationCount(f.Text("layers"), "layers", 1));
  HEADROOM_ASSIGN_OR_RETURN(m.hidden, ValidationCount(f.Text("hidden"), "hidden", 1));
  HEADROOM_ASSIGN_OR_RETURN(m.heads, ValidationCount(f.Text("heads"), "heads", 1));
  HEADROOM_ASSIGN_OR_RETURN(m.kv_heads, ValidationCount(f.Text("kv_heads"), "kv_heads", 1));
  const std::string_view ratio_text = f.Text("ffn_expansion_ratio");
  auto ratio = core::ParseDouble(ratio_text);
  if (!ratio || !(*ratio > 0) || *ratio > 64) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("ffn_expansion_ratio '{}' is not a positive number", ratio_text)));
  }
  m.ffn = static_cast<int>(std::lround(*ratio * m.hidden));
  HEADROOM_ASSIGN_OR_RETURN(m.vocab, ValidationCount(f.Text("vocab"), "vocab", 1));
  m.head_dim = m.hidden / m.heads;
  m.tied_embeddings = true;  // MPT ties its embeddings (llm-foundry's mpt configs)
  HEADROOM_ASSIGN_OR_RETURN(t.seq_len, ValidationCount(f.Text("seq_len"), "seq_len", 1));
  t.gpu = std::string(f.Text("gpu"));
  HEADROOM_ASSIGN_OR_RETURN(t.gpu_count, ValidationCount(f.Text("gpu_count"), "gpu_count", 1));
  HEADROOM_ASSIGN_OR_RETURN(t.micro_batch,
                            ValidationCount(f.Text("micro_batch"), "micro_batch", 1));
  HEADROOM_ASSIGN_OR_RETURN(t.tokens_per_s_per_gpu, ValidationNumber(f.Text("tokens_per_s_per_gpu"),
                                                                     "tokens_per_s_per_gpu"));
  t.source = std::string(f.Text("source"));
  return t;
}

double PredictTokensPerS(const TrainingMeasurement& t, const model::GpuPowerModel& gpu,
                         double compute_efficiency) {
  model::TrainingWorkload w;
  w.name = t.model.name;
  w.model = t.model;
  w.gpus = t.gpu_count;
  w.tokens_per_gpu = static_cast<double>(t.micro_batch) * t.seq_len;
  w.seq_len = t.seq_len;
  // Throughput rows measure whole steps; the efficiency fitted on them absorbs the
  // synchronization, so none is modelled separately.
  w.sync_fraction = 0;
  model::InferenceEfficiency e;
  e.compute_efficiency = compute_efficiency;
  e.memory_efficiency = 1.0;
  const model::TrainingModel m(w, gpu, e);
  return w.tokens_per_gpu / m.AtClock(gpu.spec().sm_clock_max).time_s();
}

}  // namespace

core::Result<std::vector<TrainingMeasurement>> ParseTrainingMeasurements(
    std::string_view text, const std::string& source) {
  // Also in the file, not read: global_batch_tokens, activation_checkpointing, mfu_pct.
  return ReadValidationRows(
      text, source,
      {"dataset", "model", "layers", "hidden", "heads", "kv_heads", "ffn_expansion_ratio", "vocab",
       "seq_len", "gpu", "gpu_count", "micro_batch", "tokens_per_s_per_gpu", "source"},
      &ParseTrainingRow);
}

core::Result<std::vector<TrainingMeasurement>> EmbeddedTrainingMeasurements() {
  HEADROOM_ASSIGN_OR_RETURN(const core::EmbeddedFile* f, EmbeddedValidationFile("training.csv"));
  return ParseTrainingMeasurements(f->content, std::string(f->path));
}

core::Result<model::TrainingCell> ValidateTraining(
    const HardwareCatalog& hardware, const std::vector<TrainingMeasurement>& rows,
    const std::vector<std::string>& calibration_models, int worst) {
  model::TrainingCell cell;
  cell.calibration_models = calibration_models;
  std::map<std::string, std::vector<const TrainingMeasurement*>> calibration;
  for (const TrainingMeasurement& t : rows) {
    if (cell.dataset.empty()) cell.dataset = t.dataset;
    if (std::find(calibration_models.begin(), calibration_models.end(), t.model.name) !=
        calibration_models.end()) {
      calibration[t.gpu].push_back(&t);
      ++cell.calibration_rows;
    }
  }
  std::map<std::string, double> efficiency;
  for (const auto& [gpu_name, fit_rows] : calibration) {
    auto gpu = hardware.Gpu(gpu_name);
    if (!gpu) return core::Fail(gpu.error().WithContext(fit_rows.front()->source));
    const model::GpuPowerModel power_model(**gpu);
    // One parameter: the least squared log error over a fine grid is exact enough (0.1%).
    double best = 0, best_loss = std::numeric_limits<double>::infinity();
    for (double e = 0.05; e <= 1.0 + 1e-9; e += 0.001) {
      double loss = 0;
      for (const TrainingMeasurement* t : fit_rows) {
        loss +=
            std::pow(std::log(PredictTokensPerS(*t, power_model, e) / t->tokens_per_s_per_gpu), 2);
      }
      if (loss < best_loss) {
        best_loss = loss;
        best = e;
      }
    }
    efficiency[gpu_name] = best;
    cell.efficiency.emplace_back(gpu_name, best);
  }
  for (const TrainingMeasurement& t : rows) {
    if (std::find(calibration_models.begin(), calibration_models.end(), t.model.name) !=
        calibration_models.end()) {
      continue;
    }
    auto it = efficiency.find(t.gpu);
    if (it == efficiency.end()) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("{}: no calibration rows on {} to fit its efficiency", t.source, t.gpu)));
    }
    const double predicted =
        PredictTokensPerS(t, model::GpuPowerModel(**hardware.Gpu(t.gpu)), it->second);
    const double error = predicted / t.tokens_per_s_per_gpu - 1.0;
    ++cell.rows;
    cell.mape += std::abs(error);
    cell.bias += error;
    cell.worst.push_back(
        {t.source, t.model.name, t.gpu, t.seq_len, t.tokens_per_s_per_gpu, predicted, error});
  }
  model::FinishErrorSums(&cell, worst);
  return cell;
}

core::Result<ValidationReport> ValidateBuiltInSuite(const ValidationCatalogs& catalogs,
                                                    const MigCatalog& mig,
                                                    const std::string& only_engine, int worst) {
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<model::Measurement> rows,
                            EmbeddedInferenceMeasurements());
  ValidationReport report = Validate(catalogs, rows, worst);
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<model::Measurement> energy,
                            EmbeddedServingEnergyMeasurements());
  // ML.ENERGY ran vLLM: its calibration fits the prompt length, whichever engine is asked for.
  HEADROOM_RETURN_IF_ERROR(ValidateServingEnergy(catalogs, std::string(kServingEnergyEngine),
                                                 energy, kServingEnergyCalibrationModels, worst,
                                                 &report));
  if (!only_engine.empty()) {
    std::erase_if(report.cells, [&](const ValidationCell& c) { return c.engine != only_engine; });
    std::erase_if(report.skipped, [&](const SkippedRows& s) { return s.engine != only_engine; });
    return report;
  }
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<TrainingMeasurement> training,
                            EmbeddedTrainingMeasurements());
  HEADROOM_ASSIGN_OR_RETURN(
      model::TrainingCell training_cell,
      ValidateTraining(*catalogs.hardware, training, kTrainingCalibrationModels, worst));
  report.training.push_back(std::move(training_cell));
  HEADROOM_ASSIGN_OR_RETURN(const std::vector<MigScalingMeasurement> slices,
                            EmbeddedMigScalingMeasurements());
  HEADROOM_ASSIGN_OR_RETURN(const model::GpuSpec* gpu, catalogs.hardware->Gpu(kMigScalingGpu));
  HEADROOM_ASSIGN_OR_RETURN(const mig::GpuMigSpec* profiles, mig.Gpu(kMigScalingGpu));
  HEADROOM_ASSIGN_OR_RETURN(
      model::MigScalingCell scaling,
      ValidateMigScaling(*gpu, *profiles, slices, kMigScalingCalibrationWorkloads, worst));
  report.mig_scaling.push_back(std::move(scaling));
  return report;
}

}  // namespace headroom::catalog
