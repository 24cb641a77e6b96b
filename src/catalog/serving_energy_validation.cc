#include "catalog/serving_energy_validation.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/parse.h"

namespace headroom::catalog {
namespace {

// The row's energy per token, then its time per output token.
core::Result<std::pair<model::Measurement, model::Measurement>> ParseServingEnergyRow(
    const core::CsvRow& f) {
  HEADROOM_ASSIGN_OR_RETURN(model::Measurement m, MeasuredConfiguration(f));
  HEADROOM_ASSIGN_OR_RETURN(const double batch,
                            ValidationNumber(f.Text("batch"), "batch", 1 << 16));
  m.batch = std::max(1, static_cast<int>(std::lround(batch)));
  HEADROOM_ASSIGN_OR_RETURN(const double output, ValidationNumber(f.Text("avg_output_tokens"),
                                                                  "avg_output_tokens", 1 << 20));
  m.output = std::max(1, static_cast<int>(std::lround(output)));
  m.source = std::string(f.Text("source"));
  model::Measurement tpot = m;
  m.metric = model::Metric::kJoulesPerToken;
  HEADROOM_ASSIGN_OR_RETURN(
      m.value, ValidationNumber(f.Text("j_per_output_token"), "j_per_output_token", 1e6));
  tpot.metric = model::Metric::kServingTpotMs;
  HEADROOM_ASSIGN_OR_RETURN(tpot.value,
                            ValidationNumber(f.Text("avg_tpot_ms"), "avg_tpot_ms", 1e6));
  return std::pair{std::move(m), std::move(tpot)};
}

// The serving process's host time per decode step (fixed and per running sequence) that best
// explains the TPOT rows' excess over the model's step without it: a straight line in the batch
// by least squares, neither part negative.
using HostTime = ServingEnergyCalibration::HostTime;

HostTime FitHostTime(const std::vector<std::pair<double, double>>& batch_and_excess_s) {
  double n = 0, sb = 0, sbb = 0, sr = 0, sbr = 0;
  for (const auto& [b, r] : batch_and_excess_s) {
    n += 1;
    sb += b;
    sbb += b * b;
    sr += r;
    sbr += b * r;
  }
  if (n == 0) return {};
  HostTime h;
  const double det = n * sbb - sb * sb;
  h.per_sequence_s = det > 0 ? (n * sbr - sb * sr) / det : 0;
  h.step_s = (sr - h.per_sequence_s * sb) / n;
  if (h.per_sequence_s < 0) h = {.step_s = std::max(0.0, sr / n), .per_sequence_s = 0};
  if (h.step_s < 0) h = {.step_s = 0, .per_sequence_s = std::max(0.0, sbr / sbb)};
  return h;
}

// `engine` with, on every GPU type of `rows`, the host time that explains their TPOT at
// `prompt` tokens; that host time in `fitted` if given.
InferenceFits WithHostTime(const ValidationCatalogs& c, const InferenceFits& engine,
                           const std::vector<model::Measurement>& rows, int prompt,
                           std::map<std::string, HostTime>* fitted = nullptr) {
  std::map<std::string, std::vector<std::pair<double, double>>> excess;  // by GPU type
  for (model::Measurement m : rows) {
    if (m.metric != model::Metric::kServingTpotMs) continue;
    m.input = prompt;
    const auto predicted = PredictRow(c, engine, m);
    if (!std::holds_alternative<double>(predicted)) continue;
    excess[m.gpu].emplace_back(m.batch, (m.value - std::get<double>(predicted)) / 1e3);
  }
  InferenceFits out = engine;
  for (const auto& [gpu, points] : excess) {
    const HostTime h = FitHostTime(points);
    auto fit = engine.For(gpu);
    if (!fit) continue;
    model::InferenceEfficiency e = fit->efficiency;
    e.host_step_s += h.step_s;
    e.host_per_sequence_s += h.per_sequence_s;
    out.SetFit(gpu, e);
    if (fitted) (*fitted)[gpu] = h;
  }
  return out;
}

// The mean prompt length (with the host time fitted at each) that minimizes the squared log
// error of the calibration rows' energy per token, over a grid 1 token apart up to 64, then 1/64
// of the length apart, to 4096 (the runs' max-model-len). A length at which fewer rows can be
// predicted (their batch no longer fits in memory) loses to one at which more can.
struct ServingFit {
  int prompt = 0;
  int rows = 0;  // calibration rows of energy per token predicted at that length
};

ServingFit FitServing(const ValidationCatalogs& c, const InferenceFits& engine,
                      const std::vector<model::Measurement>& rows, int min_prompt, int max_prompt) {
  ServingFit best;
  double best_loss = std::numeric_limits<double>::infinity();
  for (int prompt = min_prompt; prompt <= max_prompt; prompt += std::max(1, prompt / 64)) {
    const InferenceFits served = WithHostTime(c, engine, rows, prompt);
    double loss = 0;
    int scored = 0;
    for (model::Measurement m : rows) {
      if (m.metric != model::Metric::kJoulesPerToken) continue;
      m.input = prompt;
      const auto predicted = PredictRow(c, served, m);
      if (!std::holds_alternative<double>(predicted)) continue;
      loss += std::pow(std::log(std::get<double>(predicted) / m.value), 2);
      ++scored;
    }
    if (scored > best.rows || (scored == best.rows && loss < best_loss)) {
      best = {prompt, scored};
      best_loss = loss;
    }
  }
  return best;
}

}  // namespace

std::function<bool(const model::Measurement&)> OfModels(const std::vector<std::string>& models) {
  return [&models](const model::Measurement& m) {
    return std::find(models.begin(), models.end(), m.model) != models.end();
  };
}

core::Result<std::vector<model::Measurement>> ParseServingEnergyMeasurements(
    std::string_view text, const std::string& source) {
  HEADROOM_ASSIGN_OR_RETURN(
      auto pairs,
      // Also in the file, not read: power_limit_w, task.
      ReadValidationRows(text, source,
                         {"dataset", "engine", "model", "gpu", "tp", "batch", "avg_output_tokens",
                          "avg_tpot_ms", "j_per_output_token", "source"},
                         &ParseServingEnergyRow));
  std::vector<model::Measurement> out;
  for (auto& [energy, time] : pairs) {
    out.push_back(std::move(energy));
    out.push_back(std::move(time));
  }
  return out;
}

core::Result<std::vector<model::Measurement>> EmbeddedServingEnergyMeasurements() {
  HEADROOM_ASSIGN_OR_RETURN(const core::EmbeddedFile* f, EmbeddedValidationFile("mlenergy.csv"));
  return ParseServingEnergyMeasurements(f->content, std::string(f->path));
}

core::Result<ServingEnergyCalibration> CalibrateServingEnergy(
    const ValidationCatalogs& catalogs, const std::string& engine,
    const std::vector<model::Measurement>& rows, const std::vector<std::string>& calibration_models,
    std::optional<int> prompt) {
  HEADROOM_ASSIGN_OR_RETURN(const InferenceFits* fits, catalogs.engines->Engine(engine));
  std::vector<model::Measurement> calibration;
  std::copy_if(rows.begin(), rows.end(), std::back_inserter(calibration),
               OfModels(calibration_models));
  const ServingFit fit = prompt ? FitServing(catalogs, *fits, calibration, *prompt, *prompt)
                                : FitServing(catalogs, *fits, calibration, 1, 4096);
  if (fit.rows == 0) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("engine '{}' predicts none of the {} calibration rows of the serving-energy "
                    "set (models {})",
                    engine, calibration.size() / 2, fmt::join(calibration_models, ", "))));
  }
  ServingEnergyCalibration out{.served = *fits, .prompt = fit.prompt};
  out.served = WithHostTime(catalogs, *fits, calibration, fit.prompt, &out.host);
  out.calibration_rows = static_cast<int>(calibration.size()) / 2;  // an energy and a time a run
  return out;
}

core::Status ValidateServingEnergy(const ValidationCatalogs& catalogs, const std::string& engine,
                                   const std::vector<model::Measurement>& rows,
                                   const std::vector<std::string>& calibration_models, int worst,
                                   ValidationReport* report, std::optional<int> prompt) {
  HEADROOM_ASSIGN_OR_RETURN(
      const ServingEnergyCalibration fit,
      CalibrateServingEnergy(catalogs, engine, rows, calibration_models, prompt));
  const auto fitted_on = OfModels(calibration_models);
  const std::string dataset = rows.empty() ? "" : rows.front().dataset;
  const auto note = [&](std::string quantity, double value) {
    report->fitted_workloads.push_back({.dataset = dataset,
                                        .engine = engine,
                                        .calibration_models = calibration_models,
                                        .calibration_rows = fit.calibration_rows,
                                        .quantity = std::move(quantity),
                                        .value = value});
  };
  note(prompt ? "mean prompt tokens (given)" : "mean prompt tokens", fit.prompt);
  for (const auto& [gpu, h] : fit.host) {
    note(fmt::format("host ms per decode step on {}", gpu), h.step_s * 1e3);
    note(fmt::format("host ms per running sequence and step on {}", gpu), h.per_sequence_s * 1e3);
  }
  std::vector<model::Measurement> with_prompt = rows;
  for (model::Measurement& m : with_prompt) m.input = fit.prompt;
  ScoreRows(catalogs, fit.served, with_prompt, fitted_on, worst, report);
  // What a user who chooses no engine sees, and what the POLCA reproduction assumes: those
  // engines as they are, with the prompt.
  for (const std::string_view other : kEnginesScoredOnEveryRow) {
    if (other == engine) continue;
    HEADROOM_ASSIGN_OR_RETURN(const InferenceFits* fallback, catalogs.engines->Engine(other));
    ScoreRows(catalogs, *fallback, with_prompt, fitted_on, worst, report);
  }
  return core::Ok();
}

}  // namespace headroom::catalog
