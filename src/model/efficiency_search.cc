#include "model/efficiency_search.h"

#include <exception>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <nlopt.hpp>

namespace headroom::model {
namespace {

// Parameter vector <-> efficiency. Per-layer times are fitted in microseconds, the others in
// milliseconds, to keep the scales alike.
InferenceEfficiency FromVector(const std::vector<double>& x) {
  return {.compute_efficiency = x[0],
          .half_efficiency_width = x[1],
          .memory_efficiency = x[2],
          .prefill_layer_overhead_s = x[3] / 1e6,
          .prefill_layer_per_sequence_s = x[7] / 1e6,
          .decode_layer_overhead_s = x[4] / 1e6,
          .per_sequence_s = x[5] / 1e3,
          .allreduce_step_s = x[6] / 1e3};
}

double Loss(const std::vector<double>& x, std::vector<double>& /*grad*/, void* data) {
  return (*static_cast<const EfficiencyLoss*>(data))(FromVector(x));
}

}  // namespace

core::Result<InferenceEfficiency> MinimizeTimeLoss(const EfficiencyLoss& loss,
                                                   std::string_view what) {
  // Bounds: efficiencies in (0, 1]; half-efficiency width up to 100k columns; per-layer overheads
  // up to 5 ms; per-sequence decode cost up to 10 ms; an all-reduce step up to 1 ms.
  nlopt::opt opt(nlopt::LN_SBPLX, kEfficiencyTimeParameters);
  opt.set_lower_bounds({0.05, 0.0, 0.05, 0.0, 0.0, 0.0, 0.0, 0.0});
  opt.set_upper_bounds({1.0, 1e5, 1.0, 5000.0, 5000.0, 10.0, 1.0, 5000.0});
  opt.set_min_objective(Loss, const_cast<EfficiencyLoss*>(&loss));
  opt.set_xtol_rel(1e-10);
  opt.set_maxeval(50000);
  std::vector<double> x = {0.7, 2000.0, 0.8, 250.0, 125.0, 0.2, 0.01, 60.0};
  double best = 0;
  try {
    opt.optimize(x, best);
  } catch (const nlopt::roundoff_limited&) {
    // Converged as far as floating point allows: x holds the best point found.
  } catch (const std::exception& e) {
    return core::Fail(core::Error::Internal(fmt::format("fit of {} failed: {}", what, e.what())));
  }
  return FromVector(x);
}

InferenceEfficiency FitOverheadActivity(const InferenceEfficiency& fitted,
                                        const EfficiencyLoss& error, double* best_error) {
  InferenceEfficiency best = fitted;
  *best_error = std::numeric_limits<double>::infinity();
  for (double a = 0; a <= 1.0 + 1e-9; a += 0.005) {
    InferenceEfficiency e = fitted;
    e.overhead_activity = a;
    const double err = error(e);
    if (err < *best_error) {
      *best_error = err;
      best.overhead_activity = a;
    }
  }
  return best;
}

}  // namespace headroom::model
