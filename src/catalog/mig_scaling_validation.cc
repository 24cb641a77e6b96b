#include "catalog/mig_scaling_validation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "catalog/validation_sets.h"
#include "core/parse.h"
#include "mig/slice_model.h"

namespace headroom::catalog {
namespace {

core::Result<MigScalingMeasurement> ParseMigScalingRow(const core::CsvRow& f) {
  MigScalingMeasurement m;
  m.dataset = std::string(f.Text("dataset"));
  m.workload = std::string(f.Text("model"));
  HEADROOM_ASSIGN_OR_RETURN(m.batch, ValidationCount(f.Text("batch"), "batch", 1));
  m.slice = std::string(f.Text("slice"));
  HEADROOM_ASSIGN_OR_RETURN(
      m.samples_per_s, ValidationNumber(f.Text("samples_per_s_median"), "samples_per_s_median"));
  m.source = std::string(f.Text("source"));
  return m;
}

// One workload at one batch size: its rows by slice, smallest slice first.
struct Configuration {
  std::vector<std::pair<mig::Slice, const MigScalingMeasurement*>> slices;
};

// The model's iteration time on `slice` of a job with host time `host_s` and per-sample time
// `per_sample_s` (on the whole GPU at its maximum clock).
double IterationSeconds(const mig::SliceModel& model, double compute_share, double host_s,
                        double per_sample_s, int batch, const mig::Slice& slice) {
  const mig::WorkloadFit fit{
      .host_s = host_s, .per_sample_s = per_sample_s, .compute_share = compute_share};
  return model.IterationSeconds(fit, batch, slice, model.gpu().sm_clock_max);
}

// Predicted samples/s on the configuration's middle slices, with host and per-sample time fitted
// on its two anchors (smallest and largest slice). Host time is not negative: where the anchors
// scale better than the slices' sizes (a noisy smallest slice), it is 0 and the per-sample time
// is the geometric mean of the two anchors' own.
std::vector<double> PredictMiddle(const mig::SliceModel& model, double compute_share,
                                  const Configuration& c) {
  const auto& [small, small_row] = c.slices.front();
  const auto& [large, large_row] = c.slices.back();
  const int b = small_row->batch;
  const double g_small = IterationSeconds(model, compute_share, 0, 1, b, small);
  const double g_large = IterationSeconds(model, compute_share, 0, 1, b, large);
  const double t_small = b / small_row->samples_per_s;
  const double t_large = b / large_row->samples_per_s;
  double per_sample = (t_small - t_large) / (g_small - g_large);
  double host = t_large - per_sample * g_large;
  if (host < 0 || per_sample <= 0) {
    host = 0;
    per_sample = std::sqrt((t_small / g_small) * (t_large / g_large));
  }
  std::vector<double> out;
  for (std::size_t i = 1; i + 1 < c.slices.size(); ++i) {
    out.push_back(b /
                  IterationSeconds(model, compute_share, host, per_sample, b, c.slices[i].first));
  }
  return out;
}

double LogLoss(const mig::SliceModel& model, double compute_share,
               const std::vector<const Configuration*>& configurations) {
  double loss = 0;
  for (const Configuration* c : configurations) {
    const std::vector<double> predicted = PredictMiddle(model, compute_share, *c);
    for (std::size_t i = 0; i < predicted.size(); ++i) {
      loss += std::pow(std::log(predicted[i] / c->slices[i + 1].second->samples_per_s), 2);
    }
  }
  return loss;
}

}  // namespace

core::Result<std::vector<MigScalingMeasurement>> ParseMigScalingMeasurements(
    std::string_view text, const std::string& source) {
  return ReadValidationRows(
      text, source, {"dataset", "model", "batch", "slice", "samples_per_s_median", "source"},
      &ParseMigScalingRow);
}

core::Result<std::vector<MigScalingMeasurement>> EmbeddedMigScalingMeasurements() {
  HEADROOM_ASSIGN_OR_RETURN(const core::EmbeddedFile* f,
                            EmbeddedValidationFile("mig-training.csv"));
  return ParseMigScalingMeasurements(f->content, std::string(f->path));
}

core::Result<model::MigScalingCell> ValidateMigScaling(
    const model::GpuSpec& gpu, const mig::GpuMigSpec& mig,
    const std::vector<MigScalingMeasurement>& rows,
    const std::vector<std::string>& calibration_workloads, int worst) {
  std::map<std::pair<std::string, int>, Configuration> configurations;
  for (const MigScalingMeasurement& m : rows) {
    const mig::GiProfile* profile = mig.FindProfileOrClass(m.slice);
    if (!profile) {
      return core::Fail(core::Error::InvalidArgument(
          fmt::format("{}: slice '{}' is not a MIG profile of {}", m.source, m.slice, mig.name)));
    }
    configurations[{m.workload, m.batch}].slices.emplace_back(mig::InstanceSlice(*profile, 0), &m);
  }
  model::MigScalingCell cell;
  cell.dataset = rows.empty() ? "" : rows.front().dataset;
  cell.gpu = gpu.name;
  cell.calibration_workloads = calibration_workloads;
  std::vector<const Configuration*> calibration, scored;
  for (auto& [key, c] : configurations) {
    std::sort(c.slices.begin(), c.slices.end(),
              [](const auto& a, const auto& b) { return a.first.sm_count < b.first.sm_count; });
    if (c.slices.size() < 3) {
      cell.unscored_rows += static_cast<int>(c.slices.size());
      continue;
    }
    cell.anchor_rows += 2;
    const bool fitted = std::find(calibration_workloads.begin(), calibration_workloads.end(),
                                  key.first) != calibration_workloads.end();
    (fitted ? calibration : scored).push_back(&c);
    (fitted ? cell.calibration_rows : cell.rows) += static_cast<int>(c.slices.size()) - 2;
  }
  if (calibration.empty()) {
    return core::Fail(core::Error::InvalidArgument(fmt::format(
        "no configuration of the calibration workloads ({}) has three slice sizes to fit on",
        fmt::join(calibration_workloads, ", "))));
  }
  const mig::SliceModel model(gpu, gpu, mig, gpu.tdp);
  // One parameter in [0, 1]: a grid 0.01 apart is as exact as the data.
  double best_loss = std::numeric_limits<double>::infinity();
  for (int i = 0; i <= 100; ++i) {
    const double loss = LogLoss(model, i / 100.0, calibration);
    if (loss < best_loss) {
      best_loss = loss;
      cell.compute_share = i / 100.0;
    }
  }
  for (const Configuration* c : scored) {
    const std::vector<double> predicted = PredictMiddle(model, cell.compute_share, *c);
    for (std::size_t i = 0; i < predicted.size(); ++i) {
      const MigScalingMeasurement& m = *c->slices[i + 1].second;
      const double error = predicted[i] / m.samples_per_s - 1.0;
      cell.mape += std::abs(error);
      cell.bias += error;
      cell.worst.push_back(
          {m.source, m.workload, m.batch, m.slice, m.samples_per_s, predicted[i], error});
    }
  }
  model::FinishErrorSums(&cell, worst);
  return cell;
}

}  // namespace headroom::catalog
