#include "report/validation_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "format/table.h"

namespace headroom::report {
namespace {

using nlohmann::ordered_json;

std::string Configuration(const model::Measurement& m) {
  if (!m.requests.empty()) {
    return fmt::format("{} {} tp{} {} requests, mean prompt {}, longest output {}", m.model, m.gpu,
                       m.tp, m.requests.size(), m.input, m.output);
  }
  return fmt::format("{} {} tp{} batch {} in {} out {}", m.model, m.gpu, m.tp, m.batch, m.input,
                     m.output);
}

ordered_json CellsJson(const model::ValidationReport& report) {
  ordered_json cells = ordered_json::array();
  for (const model::ValidationCell& c : report.cells) {
    ordered_json worst = ordered_json::array();
    for (const model::RowError& e : c.worst) {
      worst.push_back({{"source", e.row.source},
                       {"model", e.row.model},
                       {"gpu", e.row.gpu},
                       {"tp", e.row.tp},
                       {"batch", e.row.batch},
                       {"input_tokens", e.row.input},
                       {"output_tokens", e.row.output},
                       {"measured", e.row.value},
                       {"predicted", e.predicted},
                       {"error", e.error}});
    }
    cells.push_back({{"engine", c.engine},
                     {"dataset", c.dataset},
                     {"metric", model::MetricName(c.metric)},
                     {"own_engine", c.own_engine},
                     {"rows", c.rows},
                     {"calibration_rows", c.calibration_rows},
                     {"mape", c.rows > 0 ? ordered_json(c.mape) : ordered_json(nullptr)},
                     {"bias", c.rows > 0 ? ordered_json(c.bias) : ordered_json(nullptr)},
                     {"worst", worst}});
  }
  return cells;
}

ordered_json TrainingJson(const model::ValidationReport& report) {
  ordered_json training = ordered_json::array();
  for (const model::TrainingCell& t : report.training) {
    ordered_json efficiency = ordered_json::object();
    for (const auto& [gpu, e] : t.efficiency) efficiency[gpu] = e;
    ordered_json worst = ordered_json::array();
    for (const auto& w : t.worst) {
      worst.push_back({{"source", w.source},
                       {"model", w.model},
                       {"gpu", w.gpu},
                       {"seq_len", w.seq_len},
                       {"measured", w.measured},
                       {"predicted", w.predicted},
                       {"error", w.error}});
    }
    training.push_back({{"dataset", t.dataset},
                        {"metric", "tokens_per_s_per_gpu"},
                        {"calibration_models", t.calibration_models},
                        {"compute_efficiency", efficiency},
                        {"rows", t.rows},
                        {"calibration_rows", t.calibration_rows},
                        {"mape", t.mape},
                        {"bias", t.bias},
                        {"worst", worst}});
  }
  return training;
}

ordered_json MigScalingJson(const model::ValidationReport& report) {
  ordered_json mig_scaling = ordered_json::array();
  for (const model::MigScalingCell& m : report.mig_scaling) {
    ordered_json worst = ordered_json::array();
    for (const auto& w : m.worst) {
      worst.push_back({{"source", w.source},
                       {"workload", w.workload},
                       {"batch", w.batch},
                       {"slice", w.slice},
                       {"measured", w.measured},
                       {"predicted", w.predicted},
                       {"error", w.error}});
    }
    mig_scaling.push_back({{"dataset", m.dataset},
                           {"gpu", m.gpu},
                           {"metric", "samples_per_s"},
                           {"calibration_workloads", m.calibration_workloads},
                           {"compute_share", m.compute_share},
                           {"rows", m.rows},
                           {"calibration_rows", m.calibration_rows},
                           {"anchor_rows", m.anchor_rows},
                           {"unscored_rows", m.unscored_rows},
                           {"mape", m.rows > 0 ? ordered_json(m.mape) : ordered_json(nullptr)},
                           {"bias", m.rows > 0 ? ordered_json(m.bias) : ordered_json(nullptr)},
                           {"worst", worst}});
  }
  return mig_scaling;
}

}  // namespace

ordered_json ValidationJson(const model::ValidationReport& report) {
  ordered_json skipped = ordered_json::array();
  for (const model::SkippedRows& s : report.skipped) {
    skipped.push_back({{"engine", s.engine}, {"reason", s.reason}, {"rows", s.rows}});
  }
  ordered_json fitted = ordered_json::array();
  for (const model::FittedWorkload& f : report.fitted_workloads) {
    fitted.push_back({{"dataset", f.dataset},
                      {"engine", f.engine},
                      {"calibration_models", f.calibration_models},
                      {"calibration_rows", f.calibration_rows},
                      {"quantity", f.quantity},
                      {"value", f.value}});
  }
  return {{"cells", CellsJson(report)},
          {"skipped", skipped},
          {"training", TrainingJson(report)},
          {"fitted_workloads", fitted},
          {"mig_scaling", MigScalingJson(report)}};
}

std::string ValidationText(const model::ValidationReport& report, const format::TextStyle& style) {
  using Align = format::TextTable::Align;
  format::TextTable table({{"engine", Align::kLeft},
                           {"data set", Align::kLeft},
                           {"metric", Align::kLeft},
                           {"rows", Align::kRight},
                           {"fitted on", Align::kRight},
                           {"MAPE", Align::kRight},
                           {"bias", Align::kRight},
                           {"worst row", Align::kLeft}});
  for (const model::ValidationCell& c : report.cells) {
    std::string worst = "-";
    if (!c.worst.empty()) {
      const model::RowError& w = c.worst.front();
      worst = fmt::format("{:+.0f}% {} ({})", w.error * 100, Configuration(w.row), w.row.source);
    }
    const std::string engine = c.own_engine ? c.engine : c.engine + " (other engine's rows)";
    table.AddRow({engine, c.dataset, std::string(model::MetricName(c.metric)),
                  std::to_string(c.rows), std::to_string(c.calibration_rows),
                  c.rows > 0 ? fmt::format("{:.1f}%", c.mape * 100) : "-",
                  c.rows > 0 ? fmt::format("{:+.1f}%", c.bias * 100) : "-", worst});
  }
  std::string out =
      "The inference model against measurements published by others (data/validation/), on the "
      "rows each engine calibration was not fitted on:\n\n" +
      table.Render(style);
  for (const model::TrainingCell& t : report.training) {
    std::string efficiency;
    for (const auto& [gpu, e] : t.efficiency) {
      efficiency += fmt::format("{}{} {:.3f}", efficiency.empty() ? "" : ", ", gpu, e);
    }
    out += fmt::format(
        "\nTraining throughput ({}, tokens/s per GPU): {} rows scored, MAPE {:.1f}%, bias "
        "{:+.1f}%; compute efficiency fitted on {} ({} rows): {}\n",
        t.dataset, t.rows, t.mape * 100, t.bias * 100, fmt::join(t.calibration_models, ", "),
        t.calibration_rows, efficiency);
    for (const auto& w : t.worst) {
      out += fmt::format("  worst: {:+.0f}% {} on {} at sequence {} ({})\n", w.error * 100, w.model,
                         w.gpu, w.seq_len, w.source);
    }
  }
  for (std::size_t i = 0; i < report.fitted_workloads.size(); ++i) {
    const model::FittedWorkload& f = report.fitted_workloads[i];
    if (i == 0 || report.fitted_workloads[i - 1].dataset != f.dataset) {
      out += fmt::format(
          "\n{}: not published, so fitted under engine {} on the rows of {} ({} rows, not "
          "scored):\n",
          f.dataset, f.engine, fmt::join(f.calibration_models, ", "), f.calibration_rows);
    }
    out += fmt::format("  {}: {:.3g}\n", f.quantity, f.value);
  }
  for (const model::MigScalingCell& m : report.mig_scaling) {
    out += fmt::format(
        "\nMIG slice scaling ({}, {}, samples/s): each workload and batch fitted on its smallest "
        "and largest slice ({} rows), the slices between predicted: {} rows scored, MAPE "
        "{:.1f}%, bias {:+.1f}%; SM-bound share {:.2f} fitted on {} ({} rows); {} rows of "
        "configurations with fewer than three slices not scored\n",
        m.dataset, m.gpu, m.anchor_rows, m.rows, m.mape * 100, m.bias * 100, m.compute_share,
        fmt::join(m.calibration_workloads, ", "), m.calibration_rows, m.unscored_rows);
    for (const auto& w : m.worst) {
      out += fmt::format("  worst: {:+.0f}% {} batch {} on {} ({})\n", w.error * 100, w.workload,
                         w.batch, w.slice, w.source);
    }
  }
  if (!report.skipped.empty()) {
    out += "\nNot scored:\n";
    for (const model::SkippedRows& s : report.skipped) {
      out += fmt::format("  {}: {} rows: {}\n", s.engine, s.rows, s.reason);
    }
  }
  return out;
}

ordered_json ProfileEngineFitJson(const model::ProfileFitErrors& fit, const std::string& profile) {
  ordered_json errors = ordered_json::array();
  for (const model::ProfileMetricError& e : fit.errors) {
    errors.push_back({{"gpu", e.gpu},
                      {"metric", model::MetricName(e.metric)},
                      {"train_rows", e.train_rows},
                      {"train_mape", e.train_mape},
                      {"held_out_rows", e.held_out_rows},
                      {"held_out_mape", e.held_out_rows > 0 ? ordered_json(e.held_out_mape)
                                                            : ordered_json(nullptr)}});
  }
  return {{"engine", fit.engine},
          {"profile", profile},
          {"fitted_gpus", fit.fitted_gpus},
          {"errors", errors},
          {"queued_rows", fit.queued}};
}

std::string ProfileEngineFitText(const model::ProfileFitErrors& fit, const std::string& profile,
                                 const format::TextStyle& style) {
  using Align = format::TextTable::Align;
  format::TextTable table({{"GPU", Align::kLeft},
                           {"metric", Align::kLeft},
                           {"fitted rows", Align::kRight},
                           {"MAPE", Align::kRight},
                           {"held-out rows", Align::kRight},
                           {"MAPE", Align::kRight}});
  for (const model::ProfileMetricError& e : fit.errors) {
    table.AddRow({e.gpu, std::string(model::MetricName(e.metric)), std::to_string(e.train_rows),
                  fmt::format("{:.1f}%", e.train_mape * 100), std::to_string(e.held_out_rows),
                  e.held_out_rows > 0 ? fmt::format("{:.1f}%", e.held_out_mape * 100) : "-"});
  }
  std::string out =
      fmt::format("Engine '{}' fitted on {} (1 configuration in 5 held out of the fit):\n\n",
                  fit.engine, profile) +
      table.Render(style);
  if (!fit.queued.empty()) {
    out += fmt::format(
        "\nLeft out: {} rows whose batch's KV cache does not fit in the GPUs' memory (the engine "
        "ran the batch in parts): {}\n",
        fit.queued.size(), fmt::join(fit.queued, ", "));
  }
  return out;
}

}  // namespace headroom::report
