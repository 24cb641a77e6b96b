#include "catalog/validation_sets.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "catalog/embedded_data.h"
#include "core/parse.h"
#include "model/engine_fit.h"

namespace headroom::catalog {
namespace {

constexpr std::string_view kInferenceHeader =
    "dataset,engine,model,gpu,tp,batch,input_tokens,output_tokens,metric,value,idle_tail_s,source";
constexpr std::size_t kInferenceColumns = 12;

core::Result<int> CountField(std::string_view text, std::string_view name, int min) {
  auto v = core::ParseInteger(text);
  if (!v || *v < min || *v > (1 << 24)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} '{}' is not a whole number of at least {}", name, text, min)));
  }
  return static_cast<int>(*v);
}

core::Result<model::Measurement> ParseRow(const std::vector<std::string_view>& f) {
  model::Measurement m;
  m.dataset = std::string(f[0]);
  m.engine = std::string(f[1]);
  m.model = std::string(f[2]);
  m.gpu = std::string(f[3]);
  HEADROOM_ASSIGN_OR_RETURN(m.tp, CountField(f[4], "tp", 1));
  HEADROOM_ASSIGN_OR_RETURN(m.batch, CountField(f[5], "batch", 1));
  HEADROOM_ASSIGN_OR_RETURN(m.input, CountField(f[6], "input_tokens", 1));
  HEADROOM_ASSIGN_OR_RETURN(m.output, CountField(f[7], "output_tokens", 0));
  const auto metric = model::MetricFromName(f[8]);
  if (!metric) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("metric '{}' is not one of prefill_ms, decode_ms, e2e_s, gpu_power_w", f[8])));
  }
  m.metric = *metric;
  auto value = core::ParseDouble(f[9]);
  if (!value || !(*value > 0) || !std::isfinite(*value)) {
    return core::Fail(
        core::Error::InvalidArgument(fmt::format("value '{}' is not a positive number", f[9])));
  }
  m.value = *value;
  auto tail = core::ParseDouble(f[10]);
  if (!tail || *tail < 0 || *tail > 3600) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("idle_tail_s '{}' is not a number of seconds in [0, 3600]", f[10])));
  }
  m.idle_tail_s = *tail;
  if ((m.metric == model::Metric::kDecodeMs || m.metric == model::Metric::kEndToEndS) &&
      m.output < 1) {
    return core::Fail(
        core::Error::InvalidArgument(fmt::format("{} needs output_tokens >= 1", f[8])));
  }
  m.source = std::string(f[11]);
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

void ScoreEngine(const ValidationCatalogs& c, const InferenceFits& engine, bool every_row,
                 const std::vector<model::Measurement>& rows, int worst, ValidationReport* out) {
  std::map<CellKey, ValidationCell> cells;
  std::map<std::string, int> skipped;
  for (const model::Measurement& m : rows) {
    const bool own = m.engine == engine.engine();
    if (!own && !every_row) continue;
    ValidationCell& cell = cells[{m.dataset, m.metric}];
    cell.engine = engine.engine();
    cell.dataset = m.dataset;
    cell.metric = m.metric;
    cell.own_engine = own;
    if (engine.IsCalibrationRow(m)) {
      ++cell.calibration_rows;
      continue;
    }
    const auto resolved = ResolveRow(c, m);
    if (const auto* why = std::get_if<std::string>(&resolved)) {
      ++skipped[*why];
      continue;
    }
    const Resolved& r = std::get<Resolved>(resolved);
    auto fit = engine.For(r.gpu->name);
    if (!fit) {
      ++skipped[fmt::format("no calibration for {}", r.gpu->name)];
      continue;
    }
    const model::InferenceModel im(*r.spec, model::GpuPowerModel(*r.gpu), fit->efficiency);
    if (!model::FitsInMemory(im, m)) {
      ++skipped["the batch's KV cache does not fit in memory (the engine queued it)"];
      continue;
    }
    const double predicted = model::Predict(im, m);
    const double error = predicted / m.value - 1.0;
    ++cell.rows;
    cell.mape += std::abs(error);
    cell.bias += error;
    cell.worst.push_back({m, predicted, error});
  }
  for (auto& [key, cell] : cells) {
    if (cell.rows > 0) {
      cell.mape /= cell.rows;
      cell.bias /= cell.rows;
    }
    std::sort(cell.worst.begin(), cell.worst.end(), [](const RowError& a, const RowError& b) {
      return std::abs(a.error) > std::abs(b.error);
    });
    if (cell.worst.size() > static_cast<std::size_t>(worst)) cell.worst.resize(worst);
    out->cells.push_back(std::move(cell));
  }
  for (const auto& [reason, n] : skipped) out->skipped.push_back({engine.engine(), reason, n});
}

}  // namespace

core::Result<std::vector<model::Measurement>> ParseInferenceMeasurements(
    std::string_view text, const std::string& source) {
  const auto lines = core::Split(text, '\n');
  if (lines.empty() || core::Trim(lines[0]) != kInferenceHeader) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{}:1: expected the header '{}'", source, kInferenceHeader)));
  }
  std::vector<model::Measurement> out;
  HEADROOM_RETURN_IF_ERROR(core::ForEachCsvRow(
      text, source, kInferenceColumns,
      [&out](const std::vector<std::string_view>& f, const std::string&) -> core::Status {
        HEADROOM_ASSIGN_OR_RETURN(model::Measurement row, ParseRow(f));
        out.push_back(std::move(row));
        return core::Ok();
      }));
  return out;
}

core::Result<std::vector<model::Measurement>> EmbeddedInferenceMeasurements() {
  for (const core::EmbeddedFile& f : EmbeddedValidationFiles()) {
    if (std::string_view(f.path).ends_with("/inference.csv")) {
      return ParseInferenceMeasurements(f.content, std::string(f.path));
    }
  }
  return core::Fail(core::Error::Internal("data/validation/inference.csv is not built in"));
}

ValidationReport Validate(const ValidationCatalogs& catalogs,
                          const std::vector<model::Measurement>& rows, int worst) {
  ValidationReport out;
  for (const std::string& name : catalogs.engines->Names()) {
    const InferenceFits* engine = *catalogs.engines->Engine(name);
    ScoreEngine(catalogs, *engine, name == kDefaultEngine, rows, worst, &out);
  }
  return out;
}

core::Result<InferenceFits> FitEngineCalibration(const ValidationCatalogs& catalogs,
                                                 const InferenceFits& engine,
                                                 const std::vector<model::Measurement>& rows) {
  if (!engine.calibration()) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "engine '{}' names no calibration rows of the validation suite", engine.engine())));
  }
  HEADROOM_ASSIGN_OR_RETURN(const InferenceFits* fallback,
                            catalogs.engines->Engine(kDefaultEngine));
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
  out.SetCalibration(*engine.calibration());
  for (auto& [gpu_name, observations] : by_gpu) {
    const model::GpuSpec* gpu = *catalogs.hardware->Gpu(gpu_name);
    // Rows whose batch did not fit in memory were queued by the engine: not a static batch.
    const model::GpuPowerModel power_model(*gpu);
    std::erase_if(observations, [&](const model::Observation& o) {
      return !model::FitsInMemory(model::InferenceModel(*o.model, power_model, {}), o.measurement);
    });
    HEADROOM_ASSIGN_OR_RETURN(GpuFit default_fit, fallback->For(gpu_name));
    HEADROOM_ASSIGN_OR_RETURN(
        model::EngineGpuFit fit,
        model::FitEngineOnGpu(power_model, observations, default_fit.efficiency.overhead_activity));
    out.SetFit(gpu_name, fit.efficiency,
               fit.power_rows > 0 ? "" : fmt::format("activity from {}", kDefaultEngine));
  }
  if (by_gpu.empty()) {
    return core::Fail(core::Error::NotFound(fmt::format(
        "the validation suite has no calibration rows for engine '{}'", engine.engine())));
  }
  return out;
}

}  // namespace headroom::catalog
