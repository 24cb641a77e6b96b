// Fitting InferenceModel's efficiency parameters to a measured latency profile (SplitwiseSim's
// llama2-70b table), with a held-out split and MAPE, and screening of physically impossible
// rows. Pure computation (NLopt's derivative-free optimizer); thread-compatible.
#ifndef HEADROOM_MODEL_INFERENCE_FIT_H_
#define HEADROOM_MODEL_INFERENCE_FIT_H_

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "model/inference_model.h"

namespace headroom::model {

// One measured configuration, averaged over its repeats.
struct ProfilePoint {
  std::string hardware;  // as the profile names it, e.g. "a100-80gb"
  int tp = 0;
  int prompt = 0;
  int batch = 0;
  int output = 0;        // generated tokens
  double prefill_s = 0;  // prefill of the whole batch
  double decode_step_s = 0;
  int repeats = 0;
  std::string source;  // file:line of its first row, for reports
  // Per-GPU power over the whole request as a fraction of TDP; 0 where not measured.
  double average_power_frac = 0;
  double peak_power_frac = 0;
};

// Whether a point belongs to the held-out 20% (a fixed hash of its configuration, so the split
// is the same on every run and machine).
bool IsHeldOut(const ProfilePoint& point);

// Drops points whose prefill took less than half as long as the same configuration at half the
// batch: more work in far less time is not physics but a failed run. Each drop is explained in
// `reasons`.
std::vector<ProfilePoint> ExcludeAnomalies(const std::vector<ProfilePoint>& points,
                                           std::vector<std::string>* reasons);

// The decode shape of a profile point: each step sees, on average, the prompt plus half the output.
InferenceShape DecodeShapeOf(const ProfilePoint& p);
InferenceShape PrefillShapeOf(const ProfilePoint& p);

struct Mape {
  double prefill = 0;  // mean absolute percentage error, as a fraction
  double decode = 0;
  int points = 0;
};
Mape Evaluate(const InferenceModel& model, const std::vector<ProfilePoint>& points);

struct FitResult {
  InferenceEfficiency efficiency;
  Mape train;
  Mape held_out;
  // The fit of overhead_activity on measured average power, where the profile has power.
  int power_points = 0;
  double power_mape = 0;   // of the request's average power per GPU
  int power_excluded = 0;  // points whose average power is implausibly low (see the .cc)
};

// Average power per GPU over a request of the point's shape (prefill, then `output` decode steps).
core::Watts RequestAveragePower(const InferenceModel& model, const ProfilePoint& point);

// Fits the efficiency parameters of `gpu` on the training points (IsHeldOut false) and reports
// MAPE on both splits. kInvalidArgument when there are too few points.
[[nodiscard]] core::Result<FitResult> FitEfficiency(const ModelSpec& model,
                                                    const GpuPowerModel& gpu,
                                                    const std::vector<ProfilePoint>& points);

// For a profile measured under an unknown power cap (SplitwiseSim's "h100-80gb-pcap"): the
// settable limit, in 5 W steps, under which `model` best reproduces the points, and the MAPE there.
struct ImpliedCap {
  core::Watts limit{0};
  Mape mape;
};
ImpliedCap FitPowerCap(const InferenceModel& model, const std::vector<ProfilePoint>& points);

// A whole profile fitted: every GPU type it measured, and the ones measured under a power cap.
// Profile hardware names ending in this were measured under an unknown power cap: fitted as their
// uncapped sibling plus an implied power limit, not as a GPU type of their own.
inline constexpr std::string_view kCappedSuffix = "-pcap";

struct GpuProfileFit {
  const GpuSpec* gpu = nullptr;  // from the lookup
  std::string profile_hardware = {};
  FitResult fit = {};
  std::string activity_from = {};  // the GPU whose measured power gave overhead_activity, if not
                                   // this one
};

struct CappedProfileFit {
  std::string profile_hardware = {};
  const GpuSpec* gpu = nullptr;  // the uncapped sibling
  ImpliedCap cap = {};
};

struct ProfileFit {
  std::vector<std::string> excluded = {};  // why each anomaly was dropped
  std::vector<ProfilePoint> kept = {};
  std::vector<GpuProfileFit> fits = {};  // in the profile's order of hardware
  std::vector<CappedProfileFit> capped = {};
};

// A GPU type by the name a profile gives its hardware (catalog names and aliases).
using GpuLookup = std::function<core::Result<const GpuSpec*>(const std::string& name)>;

// Screens the anomalies, fits each uncapped hardware's efficiency on its points, gives a fit
// without power measurements the overhead activity of the first one with them, and reproduces
// each capped hardware as its uncapped sibling's fit under an implied power limit (a capped
// hardware without a fitted sibling is left out). Fails on a hardware the lookup does not know,
// naming it, and on a hardware with too few points.
[[nodiscard]] core::Result<ProfileFit> FitProfile(const ModelSpec& model,
                                                  const std::vector<ProfilePoint>& points,
                                                  const GpuLookup& lookup);

}  // namespace headroom::model

#endif  // HEADROOM_MODEL_INFERENCE_FIT_H_
