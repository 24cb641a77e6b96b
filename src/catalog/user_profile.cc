#include "catalog/user_profile.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/csv_reader.h"
#include "core/parse.h"
#include "model/engine_fit.h"

namespace headroom::catalog {
namespace {

constexpr int kHeldOutOneIn = 5;

// FNV-1a: stable across compilers and runs, unlike std::hash.
std::uint64_t StableHash(std::string_view key) {
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

core::Result<int> Count(std::string_view text, std::string_view column, int min) {
  auto v = core::ParseInteger(core::Trim(text));
  if (!v || *v < min || *v > (1 << 24)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("column '{}': '{}' is not a whole number of at least {}", column, text, min)));
  }
  return static_cast<int>(*v);
}

// An empty cell is a value not measured.
core::Result<std::optional<double>> Positive(std::string_view text, std::string_view column) {
  const std::string_view cell = core::Trim(text);
  if (cell.empty()) return std::optional<double>();
  auto v = core::ParseDouble(cell);
  if (!v || !(*v > 0) || !std::isfinite(*v)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("column '{}': '{}' is not a positive number", column, text)));
  }
  return std::optional<double>(*v);
}

double Mape(const std::vector<double>& errors) {
  double sum = 0;
  for (double e : errors) sum += std::abs(e);
  return errors.empty() ? 0 : sum / static_cast<double>(errors.size());
}

// A measurement per value the row has, added to `out`; how many.
core::Result<int> AddProfileRow(const core::CsvRow& f, const std::string& engine,
                                std::vector<model::Measurement>& out) {
  model::Measurement base;
  base.dataset = "profile";
  base.engine = engine;
  base.model = std::string(f.Text("model"));
  base.gpu = std::string(f.Text("gpu"));
  base.source = f.where();
  HEADROOM_ASSIGN_OR_RETURN(base.tp, Count(f.Text("tp"), "tp", 1));
  HEADROOM_ASSIGN_OR_RETURN(base.batch, Count(f.Text("batch"), "batch", 1));
  HEADROOM_ASSIGN_OR_RETURN(base.input, Count(f.Text("prompt"), "prompt", 1));
  HEADROOM_ASSIGN_OR_RETURN(base.output, Count(f.Text("output"), "output", 1));
  int values = 0;
  for (const auto& [column, metric] : {std::pair{"ttft_ms", model::Metric::kPrefillMs},
                                       std::pair{"tpot_ms", model::Metric::kDecodeMs},
                                       std::pair{"gpu_power_w", model::Metric::kGpuPowerW}}) {
    if (!f.Has(column)) continue;
    HEADROOM_ASSIGN_OR_RETURN(std::optional<double> v, Positive(f.Text(column), column));
    if (!v) continue;
    model::Measurement m = base;
    m.metric = metric;
    m.value = *v;
    out.push_back(std::move(m));
    ++values;
  }
  return values;
}

}  // namespace

bool LooksLikeProfileRows(std::string_view header) {
  return header.find("ttft_ms") != std::string_view::npos ||
         header.find("tpot_ms") != std::string_view::npos;
}

core::Result<std::vector<model::Measurement>> ParseProfileRows(std::string_view text,
                                                               const std::string& source,
                                                               const std::string& engine) {
  std::vector<model::Measurement> out;
  HEADROOM_RETURN_IF_ERROR(
      core::ParseCsv(text, source,
                     {"model", "gpu", "tp", "batch", "prompt", "output", "ttft_ms", "tpot_ms",
                      core::CsvColumn::Optional("gpu_power_w")},
                     [&](const core::CsvRow& f) -> core::Status {
                       auto values = AddProfileRow(f, engine, out);
                       if (!values) return core::Fail(values.error().WithContext(f.where()));
                       if (*values == 0) {
                         return core::Fail(core::Error::InvalidArgument(
                             fmt::format("{}: no measured value (ttft_ms, tpot_ms)", f.where())));
                       }
                       return core::Ok();
                     }));
  if (out.empty()) {
    return core::Fail(core::Error::NotFound(fmt::format("{}: no measurement rows", source)));
  }
  return out;
}

bool IsHeldOutConfiguration(const model::Measurement& m) {
  return StableHash(
             fmt::format("{}/{}/{}/{}/{}/{}", m.model, m.gpu, m.tp, m.batch, m.input, m.output)) %
             kHeldOutOneIn ==
         0;
}

core::Result<ProfileEngineFit> FitProfileEngine(const ValidationCatalogs& catalogs,
                                                const std::vector<model::Measurement>& rows,
                                                const std::string& engine,
                                                const std::string& description) {
  HEADROOM_ASSIGN_OR_RETURN(const InferenceFits* fallback,
                            catalogs.engines->Engine(kProfileEngine));
  std::map<std::string, std::vector<model::Observation>> train, held_out;
  ProfileEngineFit out{InferenceFits(engine, description), {.engine = engine}};
  for (const model::Measurement& m : rows) {
    auto spec = catalogs.models->Model(m.model);
    if (!spec) return core::Fail(spec.error().WithContext(m.source + ": model"));
    auto gpu = catalogs.hardware->Gpu(m.gpu);
    if (!gpu) return core::Fail(gpu.error().WithContext(m.source + ": gpu"));
    if ((*spec)->heads % m.tp != 0) {
      return core::Fail(
          core::Error::InvalidArgument(fmt::format("{}: tp {} does not divide {}'s {} heads",
                                                   m.source, m.tp, (*spec)->name, (*spec)->heads)));
    }
    if (!model::FitsInMemory(model::InferenceModel(**spec, model::GpuPowerModel(**gpu), {}), m)) {
      if (out.summary.queued.empty() || out.summary.queued.back() != m.source)
        out.summary.queued.push_back(m.source);
      continue;
    }
    (IsHeldOutConfiguration(m) ? held_out : train)[(*gpu)->name].push_back({*spec, m});
  }
  for (const auto& [gpu_name, observations] : train) {
    const model::GpuPowerModel gpu(**catalogs.hardware->Gpu(gpu_name));
    HEADROOM_ASSIGN_OR_RETURN(GpuFit default_fit, fallback->For(gpu_name));
    auto fit = model::FitEngineOnGpu(gpu, observations, default_fit.efficiency.overhead_activity);
    if (!fit) return core::Fail(fit.error().WithContext("--profile"));
    out.fits.SetFit(gpu_name, fit->efficiency,
                    fit->power_rows > 0 ? "" : fmt::format("activity from {}", kProfileEngine));
    // Error per metric on both splits.
    std::map<model::Metric, std::pair<std::vector<double>, std::vector<double>>> errors;
    auto score = [&](const std::vector<model::Observation>& of, bool is_train) {
      for (const model::Observation& o : of) {
        const model::InferenceModel m(*o.model, gpu, fit->efficiency);
        const double e = model::Predict(m, o.measurement) / o.measurement.value - 1.0;
        auto& [tr, ho] = errors[o.measurement.metric];
        (is_train ? tr : ho).push_back(e);
      }
    };
    score(observations, true);
    if (auto it = held_out.find(gpu_name); it != held_out.end()) score(it->second, false);
    for (const auto& [metric, split] : errors) {
      out.summary.errors.push_back({.gpu = gpu_name,
                                    .metric = metric,
                                    .train_rows = static_cast<int>(split.first.size()),
                                    .train_mape = Mape(split.first),
                                    .held_out_rows = static_cast<int>(split.second.size()),
                                    .held_out_mape = Mape(split.second)});
    }
  }
  out.summary.fitted_gpus = out.fits.FittedGpus();
  return out;
}

}  // namespace headroom::catalog
