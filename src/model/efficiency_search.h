// The searches every fit of InferenceEfficiency shares (a measured profile, inference_fit.h, and
// a serving engine's calibration rows, engine_fit.h): the time parameters by NLopt's Subplex on a
// loss, then the overhead activity, which changes power and not time, on its own. Pure.
#ifndef HEADROOM_MODEL_EFFICIENCY_SEARCH_H_
#define HEADROOM_MODEL_EFFICIENCY_SEARCH_H_

#include <functional>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/inference_model.h"

namespace headroom::model {

// The number of time parameters the search fits (all of InferenceEfficiency but the activity).
inline constexpr unsigned kEfficiencyTimeParameters = 8;

using EfficiencyLoss = std::function<double(const InferenceEfficiency&)>;

// The time parameters minimizing `loss`, within physical bounds (efficiencies in (0, 1], fixed
// costs up to a few ms). `what` names the fit in an error.
[[nodiscard]] core::Result<InferenceEfficiency> MinimizeTimeLoss(const EfficiencyLoss& loss,
                                                                 std::string_view what);

// One parameter a search frees: the field, how many of the search's units make one of the
// field's (1e6 for a time in seconds searched in microseconds, so that all the parameters have
// alike scales), and its bounds and start in the search's units.
struct FreeParameter {
  double InferenceEfficiency::*field = nullptr;
  double per = 1.0;
  double lower = 0;
  double upper = 1;
  double start = 0;
};

// `base` with the `free` parameters that minimize `loss` (NLopt's Subplex), the others kept.
[[nodiscard]] core::Result<InferenceEfficiency> MinimizeOver(const InferenceEfficiency& base,
                                                             const std::vector<FreeParameter>& free,
                                                             const EfficiencyLoss& loss,
                                                             std::string_view what);

// `fitted` with the overhead activity in [0, 1] (steps of 0.005) that minimizes `error`, which
// returns the summed absolute relative error of power; *best_error gets that minimum.
InferenceEfficiency FitOverheadActivity(const InferenceEfficiency& fitted,
                                        const EfficiencyLoss& error, double* best_error);

}  // namespace headroom::model

#endif  // HEADROOM_MODEL_EFFICIENCY_SEARCH_H_
