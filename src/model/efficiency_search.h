// The searches every fit of InferenceEfficiency shares (a measured profile, inference_fit.h, and
// a serving engine's calibration rows, engine_fit.h): the time parameters by NLopt's Subplex on a
// loss, then the overhead activity, which changes power and not time, on its own. Pure.
#ifndef HEADROOM_MODEL_EFFICIENCY_SEARCH_H_
#define HEADROOM_MODEL_EFFICIENCY_SEARCH_H_

#include <functional>
#include <string_view>

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

// `fitted` with the overhead activity in [0, 1] (steps of 0.005) that minimizes `error`, which
// returns the summed absolute relative error of power; *best_error gets that minimum.
InferenceEfficiency FitOverheadActivity(const InferenceEfficiency& fitted,
                                        const EfficiencyLoss& error, double* best_error);

}  // namespace headroom::model

#endif  // HEADROOM_MODEL_EFFICIENCY_SEARCH_H_
