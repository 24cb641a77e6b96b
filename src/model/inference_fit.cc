#include "model/inference_fit.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "model/efficiency_search.h"

namespace headroom::model {
namespace {

constexpr int kHeldOutOneIn = 5;
constexpr unsigned kParameters = kEfficiencyTimeParameters;
constexpr size_t kMinTrainingPoints = 2 * kParameters;

// FNV-1a over the configuration: stable across compilers, unlike std::hash.
std::uint64_t StableHash(const ProfilePoint& p) {
  const std::string key =
      fmt::format("{}/{}/{}/{}/{}", p.hardware, p.tp, p.prompt, p.batch, p.output);
  std::uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return h;
}

// Measured request-average power below this share of TDP, while prefill alone peaks near TDP
// and lasts seconds, is a sensor artefact (the profile's 8192-token rows read ~0.17), not physics.
constexpr double kMinPlausibleAveragePowerFrac = 0.3;

}  // namespace

core::Watts RequestAveragePower(const InferenceModel& m, const ProfilePoint& p) {
  const core::Megahertz f = m.gpu().spec().sm_clock_max;
  const PhaseEstimate prefill = m.AtClock(m.PrefillPhase(PrefillShapeOf(p)), p.tp, f);
  const PhaseEstimate decode = m.AtClock(*m.DecodePhase(DecodeShapeOf(p)), p.tp, f);
  const double time = prefill.time_s + p.output * decode.time_s;
  const double energy = prefill.energy.value() + p.output * decode.energy.value();
  return core::Watts(energy / p.tp / time);
}

bool IsHeldOut(const ProfilePoint& point) { return StableHash(point) % kHeldOutOneIn == 0; }

InferenceShape PrefillShapeOf(const ProfilePoint& p) {
  return {.tp = p.tp, .batch = p.batch, .prompt = p.prompt, .context = 0};
}

InferenceShape DecodeShapeOf(const ProfilePoint& p) {
  return {.tp = p.tp, .batch = p.batch, .prompt = p.prompt, .context = p.prompt + p.output / 2};
}

std::vector<ProfilePoint> ExcludeAnomalies(const std::vector<ProfilePoint>& points,
                                           std::vector<std::string>* reasons) {
  std::vector<ProfilePoint> kept;
  for (const ProfilePoint& p : points) {
    const ProfilePoint* half = nullptr;
    for (const ProfilePoint& q : points) {
      if (q.hardware == p.hardware && q.tp == p.tp && q.prompt == p.prompt &&
          q.output == p.output && 2 * q.batch == p.batch) {
        half = &q;
      }
    }
    if (half != nullptr && p.prefill_s < 0.5 * half->prefill_s) {
      if (reasons != nullptr) {
        reasons->push_back(fmt::format(
            "{}: {} tp{} prompt {} batch {}: prefill {:.1f} ms, but {:.1f} ms at batch {}",
            p.source, p.hardware, p.tp, p.prompt, p.batch, p.prefill_s * 1e3, half->prefill_s * 1e3,
            half->batch));
      }
      continue;
    }
    kept.push_back(p);
  }
  return kept;
}

Mape Evaluate(const InferenceModel& m, const std::vector<ProfilePoint>& points) {
  Mape out;
  const core::Megahertz f = m.gpu().spec().sm_clock_max;
  for (const ProfilePoint& p : points) {
    const double prefill = m.AtClock(m.PrefillPhase(PrefillShapeOf(p)), p.tp, f).time_s;
    const double decode = m.AtClock(*m.DecodePhase(DecodeShapeOf(p)), p.tp, f).time_s;
    out.prefill += std::abs(prefill / p.prefill_s - 1.0);
    out.decode += std::abs(decode / p.decode_step_s - 1.0);
    ++out.points;
  }
  if (out.points > 0) {
    out.prefill /= out.points;
    out.decode /= out.points;
  }
  return out;
}

core::Result<FitResult> FitEfficiency(const ModelSpec& model, const GpuPowerModel& gpu,
                                      const std::vector<ProfilePoint>& points) {
  std::vector<ProfilePoint> train, held_out;
  for (const ProfilePoint& p : points) (IsHeldOut(p) ? held_out : train).push_back(p);
  if (train.size() < kMinTrainingPoints) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("{} training points for {} are too few to fit {} parameters", train.size(),
                    gpu.spec().name, kParameters)));
  }
  const core::Megahertz f = gpu.spec().sm_clock_max;
  const EfficiencyLoss squared_log_error = [&](const InferenceEfficiency& e) {
    const InferenceModel m(model, gpu, e);
    double sum = 0;
    for (const ProfilePoint& p : train) {
      const double prefill = m.AtClock(m.PrefillPhase(PrefillShapeOf(p)), p.tp, f).time_s;
      const double decode = m.AtClock(*m.DecodePhase(DecodeShapeOf(p)), p.tp, f).time_s;
      sum += std::pow(std::log(prefill / p.prefill_s), 2) +
             std::pow(std::log(decode / p.decode_step_s), 2);
    }
    return sum / static_cast<double>(train.size());
  };
  FitResult result;
  HEADROOM_ASSIGN_OR_RETURN(result.efficiency,
                            MinimizeTimeLoss(squared_log_error, gpu.spec().name));
  // Overhead activity changes power, not time: fit it alone on the measured average power.
  std::vector<const ProfilePoint*> powered;
  for (const ProfilePoint& p : points) {
    if (p.average_power_frac <= 0) continue;
    if (p.average_power_frac < kMinPlausibleAveragePowerFrac) {
      ++result.power_excluded;
      continue;
    }
    powered.push_back(&p);
  }
  if (!powered.empty()) {
    const EfficiencyLoss power_error = [&](const InferenceEfficiency& e) {
      const InferenceModel m(model, gpu, e);
      double error = 0;
      for (const ProfilePoint* p : powered) {
        const double measured = p->average_power_frac * gpu.spec().tdp.value();
        error += std::abs(RequestAveragePower(m, *p).value() / measured - 1.0);
      }
      return error;
    };
    double best_error = 0;
    result.efficiency = FitOverheadActivity(result.efficiency, power_error, &best_error);
    result.power_points = static_cast<int>(powered.size());
    result.power_mape = best_error / static_cast<double>(powered.size());
  }
  const InferenceModel fitted(model, gpu, result.efficiency);
  result.train = Evaluate(fitted, train);
  result.held_out = Evaluate(fitted, held_out);
  return result;
}

ImpliedCap FitPowerCap(const InferenceModel& m, const std::vector<ProfilePoint>& points) {
  const GpuSpec& spec = m.gpu().spec();
  ImpliedCap best;
  double best_error = std::numeric_limits<double>::infinity();
  for (double w = spec.power_limit_min.value(); w <= spec.power_limit_max.value(); w += 5) {
    double error = 0;
    Mape mape;
    for (const ProfilePoint& p : points) {
      const double prefill =
          m.UnderPowerLimit(m.PrefillPhase(PrefillShapeOf(p)), p.tp, core::Watts(w)).time_s;
      const double decode =
          m.UnderPowerLimit(*m.DecodePhase(DecodeShapeOf(p)), p.tp, core::Watts(w)).time_s;
      error += std::pow(std::log(prefill / p.prefill_s), 2) +
               std::pow(std::log(decode / p.decode_step_s), 2);
      mape.prefill += std::abs(prefill / p.prefill_s - 1.0);
      mape.decode += std::abs(decode / p.decode_step_s - 1.0);
      ++mape.points;
    }
    if (error < best_error && mape.points > 0) {
      best_error = error;
      mape.prefill /= mape.points;
      mape.decode /= mape.points;
      best = {core::Watts(w), mape};
    }
  }
  return best;
}

namespace {

std::vector<ProfilePoint> PointsOf(const std::vector<ProfilePoint>& points,
                                   const std::string& hardware) {
  std::vector<ProfilePoint> mine;
  for (const ProfilePoint& p : points) {
    if (p.hardware == hardware) mine.push_back(p);
  }
  return mine;
}

}  // namespace

core::Result<ProfileFit> FitProfile(const ModelSpec& model, const std::vector<ProfilePoint>& points,
                                    const GpuLookup& lookup) {
  ProfileFit out;
  out.kept = ExcludeAnomalies(points, &out.excluded);
  std::vector<std::string> hardware;
  for (const ProfilePoint& p : out.kept) {
    if (std::find(hardware.begin(), hardware.end(), p.hardware) == hardware.end()) {
      hardware.push_back(p.hardware);
    }
  }
  for (const std::string& hw : hardware) {
    if (hw.ends_with(kCappedSuffix)) continue;
    auto gpu = lookup(hw);
    if (!gpu) return core::Fail(gpu.error().WithContext(fmt::format("profile hardware '{}'", hw)));
    HEADROOM_ASSIGN_OR_RETURN(FitResult fit,
                              FitEfficiency(model, GpuPowerModel(**gpu), PointsOf(out.kept, hw)));
    out.fits.push_back({.gpu = *gpu, .profile_hardware = hw, .fit = fit});
  }
  // A profile without power measurements takes its overhead activity from one with them.
  const auto with_power =
      std::find_if(out.fits.begin(), out.fits.end(),
                   [](const GpuProfileFit& r) { return r.fit.power_points > 0; });
  if (with_power != out.fits.end()) {
    for (GpuProfileFit& r : out.fits) {
      if (r.fit.power_points > 0) continue;
      r.fit.efficiency.overhead_activity = with_power->fit.efficiency.overhead_activity;
      r.activity_from = with_power->gpu->name;
    }
  }
  for (const std::string& hw : hardware) {
    if (!hw.ends_with(kCappedSuffix)) continue;
    const std::string base = hw.substr(0, hw.size() - kCappedSuffix.size());
    auto gpu = lookup(base);
    auto it = std::find_if(out.fits.begin(), out.fits.end(),
                           [&](const GpuProfileFit& r) { return r.profile_hardware == base; });
    if (!gpu || it == out.fits.end()) continue;
    const InferenceModel m(model, GpuPowerModel(**gpu), it->fit.efficiency);
    out.capped.push_back(
        {.profile_hardware = hw, .gpu = *gpu, .cap = FitPowerCap(m, PointsOf(out.kept, hw))});
  }
  return out;
}

}  // namespace headroom::model
