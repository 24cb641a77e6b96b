#include "model/efficiency_search.h"

#include <cstddef>
#include <exception>
#include <limits>
#include <vector>

#include <fmt/format.h>
#include <nlopt.hpp>

namespace headroom::model {
namespace {

using E = InferenceEfficiency;

// Every time parameter of a full fit, in the order, units, bounds and starts of its search:
// efficiencies in (0, 1]; half-efficiency width up to 100k columns; per-layer overheads up to
// 5 ms (in microseconds); per-sequence decode cost up to 10 ms; an all-reduce step up to 1 ms.
const std::vector<FreeParameter>& TimeParameters() {
  static const std::vector<FreeParameter> kAll = {
      {&E::compute_efficiency, 1.0, 0.05, 1.0, 0.7},
      {&E::half_efficiency_width, 1.0, 0.0, 1e5, 2000.0},
      {&E::memory_efficiency, 1.0, 0.05, 1.0, 0.8},
      {&E::prefill_layer_overhead_s, 1e6, 0.0, 5000.0, 250.0},
      {&E::decode_layer_overhead_s, 1e6, 0.0, 5000.0, 125.0},
      {&E::per_sequence_s, 1e3, 0.0, 10.0, 0.2},
      {&E::allreduce_step_s, 1e3, 0.0, 1.0, 0.01},
      {&E::prefill_layer_per_sequence_s, 1e6, 0.0, 5000.0, 60.0},
  };
  return kAll;
}

struct Search {
  const InferenceEfficiency* base;
  const std::vector<FreeParameter>* free;
  const EfficiencyLoss* loss;

  InferenceEfficiency At(const std::vector<double>& x) const {
    InferenceEfficiency e = *base;
    for (std::size_t i = 0; i < x.size(); ++i) e.*((*free)[i].field) = x[i] / (*free)[i].per;
    return e;
  }
};

double Loss(const std::vector<double>& x, std::vector<double>& /*grad*/, void* data) {
  const auto* search = static_cast<const Search*>(data);
  return (*search->loss)(search->At(x));
}

}  // namespace

core::Result<InferenceEfficiency> MinimizeTimeLoss(const EfficiencyLoss& loss,
                                                   std::string_view what) {
  static_assert(kEfficiencyTimeParameters == 8);
  return MinimizeOver(InferenceEfficiency{}, TimeParameters(), loss, what);
}

core::Result<InferenceEfficiency> MinimizeOver(const InferenceEfficiency& base,
                                               const std::vector<FreeParameter>& free,
                                               const EfficiencyLoss& loss, std::string_view what) {
  const auto n = static_cast<unsigned>(free.size());
  nlopt::opt opt(nlopt::LN_SBPLX, n);
  std::vector<double> lower, upper, x;
  for (const FreeParameter& p : free) {
    lower.push_back(p.lower);
    upper.push_back(p.upper);
    x.push_back(p.start);
  }
  opt.set_lower_bounds(lower);
  opt.set_upper_bounds(upper);
  Search search{&base, &free, &loss};
  opt.set_min_objective(Loss, &search);
  opt.set_xtol_rel(1e-10);
  opt.set_maxeval(50000);
  double best = 0;
  try {
    opt.optimize(x, best);
  } catch (const nlopt::roundoff_limited&) {
    // Converged as far as floating point allows: x holds the best point found.
  } catch (const std::exception& e) {
    return core::Fail(core::Error::Internal(fmt::format("fit of {} failed: {}", what, e.what())));
  }
  return search.At(x);
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
