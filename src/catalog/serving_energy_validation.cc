#include "catalog/serving_energy_validation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "catalog/embedded_data.h"
#include "core/parse.h"

namespace headroom::catalog {
namespace {

constexpr std::string_view kServingEnergyHeader =
    "dataset,engine,model,gpu,tp,batch,avg_output_tokens,avg_tpot_ms,j_per_output_token,"
    "power_limit_w,task,source";
constexpr std::size_t kServingEnergyColumns = 12;

core::Result<double> PositiveField(std::string_view text, std::string_view name, double max) {
  auto v = core::ParseDouble(text);
  if (!v || !(*v > 0) || !(*v <= max)) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} '{}' is not a number in (0, {}]", name, text, max)));
  }
  return *v;
}

core::Result<model::Measurement> ParseServingEnergyRow(const std::vector<std::string_view>& f) {
  model::Measurement m;
  m.dataset = std::string(f[0]);
  m.engine = std::string(f[1]);
  m.model = std::string(f[2]);
  m.gpu = std::string(f[3]);
  HEADROOM_ASSIGN_OR_RETURN(const double tp, PositiveField(f[4], "tp", 64));
  if (tp != std::floor(tp)) {
    return core::Fail(
        core::Error::InvalidArgument(fmt::format("tp '{}' is not a whole number", f[4])));
  }
  m.tp = static_cast<int>(tp);
  HEADROOM_ASSIGN_OR_RETURN(const double batch, PositiveField(f[5], "batch", 1 << 16));
  m.batch = std::max(1, static_cast<int>(std::lround(batch)));
  HEADROOM_ASSIGN_OR_RETURN(const double output,
                            PositiveField(f[6], "avg_output_tokens", 1 << 20));
  m.output = std::max(1, static_cast<int>(std::lround(output)));
  m.metric = model::Metric::kJoulesPerToken;
  HEADROOM_ASSIGN_OR_RETURN(m.value, PositiveField(f[8], "j_per_output_token", 1e6));
  m.source = std::string(f[11]);
  return m;
}

// The least squared log error of `rows` at each prompt length of a grid (1 token apart up to
// 64, then 1/64 of the length apart, to 4096: the runs' max-model-len), and the best length.
struct PromptFit {
  int prompt = 0;
  int rows = 0;
};

PromptFit FitPrompt(const ValidationCatalogs& c, const InferenceFits& engine,
                    const std::vector<model::Measurement>& rows) {
  PromptFit best;
  double best_loss = std::numeric_limits<double>::infinity();
  for (int prompt = 1; prompt <= 4096; prompt += std::max(1, prompt / 64)) {
    double loss = 0;
    int scored = 0;
    for (model::Measurement m : rows) {
      m.input = prompt;
      const auto predicted = PredictRow(c, engine, m);
      if (!std::holds_alternative<double>(predicted)) continue;
      loss += std::pow(std::log(std::get<double>(predicted) / m.value), 2);
      ++scored;
    }
    // A length at which fewer rows fit in memory is not comparable: keep the most rows first.
    if (scored > best.rows || (scored == best.rows && loss < best_loss)) {
      best = {prompt, scored};
      best_loss = loss;
    }
  }
  return best;
}

void ScoreServingEnergy(const ValidationCatalogs& c, const InferenceFits& engine,
           const std::vector<model::Measurement>& rows, int calibration_rows, int worst,
           ValidationReport* report) {
  std::map<std::string, ValidationCell> cells;  // by data set
  std::map<std::string, int> skipped;
  for (const model::Measurement& m : rows) {
    ValidationCell& cell = cells[m.dataset];
    cell.engine = engine.engine();
    cell.dataset = m.dataset;
    cell.metric = m.metric;
    cell.own_engine = m.engine == engine.engine();
    cell.calibration_rows = calibration_rows;
    const auto predicted = PredictRow(c, engine, m);
    if (const auto* why = std::get_if<std::string>(&predicted)) {
      ++skipped[*why];
      continue;
    }
    AddScore(&cell, m, std::get<double>(predicted));
  }
  for (auto& [dataset, cell] : cells) {
    FinishCell(&cell, worst);
    report->cells.push_back(std::move(cell));
  }
  for (const auto& [reason, n] : skipped) report->skipped.push_back({engine.engine(), reason, n});
}

}  // namespace

core::Result<std::vector<model::Measurement>> ParseServingEnergyMeasurements(
    std::string_view text, const std::string& source) {
  if (core::Trim(text.substr(0, text.find('\n'))) != kServingEnergyHeader) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{}:1: expected the header '{}'", source, kServingEnergyHeader)));
  }
  std::vector<model::Measurement> out;
  HEADROOM_RETURN_IF_ERROR(core::ForEachCsvRow(
      text, source, kServingEnergyColumns,
      [&out](const std::vector<std::string_view>& f, const std::string&) -> core::Status {
        HEADROOM_ASSIGN_OR_RETURN(model::Measurement row, ParseServingEnergyRow(f));
        out.push_back(std::move(row));
        return core::Ok();
      }));
  return out;
}

core::Result<std::vector<model::Measurement>> EmbeddedServingEnergyMeasurements() {
  for (const core::EmbeddedFile& f : EmbeddedValidationFiles()) {
    if (std::string_view(f.path).ends_with("/mlenergy.csv")) {
      return ParseServingEnergyMeasurements(f.content, std::string(f.path));
    }
  }
  return core::Fail(core::Error::Internal("data/validation/mlenergy.csv is not built in"));
}

core::Status ValidateServingEnergy(const ValidationCatalogs& catalogs, const std::string& engine,
                                   const std::vector<model::Measurement>& rows,
                                   const std::vector<std::string>& calibration_models, int worst,
                                   ValidationReport* report) {
  HEADROOM_ASSIGN_OR_RETURN(const InferenceFits* fits, catalogs.engines->Engine(engine));
  std::vector<model::Measurement> calibration, scored;
  for (const model::Measurement& m : rows) {
    const bool fitted = std::find(calibration_models.begin(), calibration_models.end(),
                                  m.model) != calibration_models.end();
    (fitted ? calibration : scored).push_back(m);
  }
  const PromptFit fit = FitPrompt(catalogs, *fits, calibration);
  if (fit.rows == 0) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("engine '{}' predicts none of the {} calibration rows of the serving-energy "
                    "set (models {})",
                    engine, calibration.size(), fmt::join(calibration_models, ", "))));
  }
  for (model::Measurement& m : scored) m.input = fit.prompt;
  const std::string dataset = rows.empty() ? "" : rows.front().dataset;
  report->fitted_workloads.push_back({.dataset = dataset,
                                      .engine = engine,
                                      .calibration_models = calibration_models,
                                      .calibration_rows = static_cast<int>(calibration.size()),
                                      .quantity = "mean prompt tokens",
                                      .value = static_cast<double>(fit.prompt)});
  const int calibration_rows = static_cast<int>(calibration.size());
  ScoreServingEnergy(catalogs, *fits, scored, calibration_rows, worst, report);
  if (engine != kDefaultEngine) {
    HEADROOM_ASSIGN_OR_RETURN(const InferenceFits* fallback,
                              catalogs.engines->Engine(kDefaultEngine));
    ScoreServingEnergy(catalogs, *fallback, scored, calibration_rows, worst, report);
  }
  return core::Ok();
}

}  // namespace headroom::catalog
