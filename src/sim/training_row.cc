#include "sim/training_row.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "core/check.h"
#include "sim/random_draws.h"

namespace headroom::sim {
namespace {

// One server's GPUs (they move together).
struct TrainingServerState {
  double start_s = 0;      // its compute of the current iteration starts
  double work_left_s = 0;  // compute left, in seconds at full speed
  double done_s = 0;       // when it finished computing (valid once work_left_s is 0)
  double drawn_w = -1;     // per GPU; < 0 before the first step
  double below_s = 0;      // how long the demand has stayed below drawn_w (hysteresis)
};

double SpeedAtPower(const IterationProfile& p, double power_w) {
  const auto& table = p.speed_at_power;
  if (table.empty() || power_w >= p.compute_w) return 1.0;
  if (power_w >= table.back().first) return table.back().second;
  if (power_w <= table.front().first) {
    const double span = table.front().first - p.sync_w;
    if (span <= 0) return table.front().second;
    return std::max(0.0, table.front().second * (power_w - p.sync_w) / span);
  }
  const auto hi = std::lower_bound(table.begin(), table.end(), power_w,
                                   [](const auto& point, double w) { return point.first < w; });
  const auto lo = hi - 1;
  const double f = (power_w - lo->first) / (hi->first - lo->first);
  return lo->second + f * (hi->second - lo->second);
}

// What a GPU under power smoothing draws over a step, from what it drew over the last one.
double SmoothedPower(const PowerSmoothing& s, double drawn_w, double demand_w, double dt,
                     double& below_s) {
  const double target = std::max(demand_w, s.floor_w);
  if (target >= drawn_w) {
    below_s = 0;
    return std::min(target, drawn_w + s.ramp_up_w_per_s * dt);
  }
  below_s += dt;
  if (below_s <= core::ToSeconds(s.ramp_down_hysteresis)) return drawn_w;
  return std::max(target, drawn_w - s.ramp_down_w_per_s * dt);
}

double StepOverlap(double a0, double a1, double b0, double b1) {
  return std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
}

// The job's schedule across the row: iterations, the barrier, checkpoints.
class TrainingJob {
 public:
  TrainingJob(const TrainingRowConfig& c, const IterationProfile& p, const PowerSmoothing* s)
      : c_(c), p_(p), s_(s), rng_(DeriveSeed(c.seed, 0)), servers_(c.servers) {
    next_checkpoint_s_ = core::ToSeconds(c.checkpoint_every);
    StartIteration(0);
  }

  // The row's mean power over [t0, t1).
  double Step(double t0, double t1) {
    if (waiting_ && next_start_s_ < t1) StartIteration(next_start_s_);
    double row_w = 0;
    for (TrainingServerState& g : servers_) row_w += StepServer(g, t0, t1);
    if (!waiting_ && std::all_of(servers_.begin(), servers_.end(),
                                 [](const auto& g) { return g.work_left_s <= 0; })) {
      EndIteration();
    }
    return row_w;
  }

  TrainingRowRun& run() { return run_; }

 private:
  void StartIteration(double t) {
    waiting_ = false;
    const double skew = core::ToSeconds(c_.skew);
    for (TrainingServerState& g : servers_) {
      g.start_s = t + skew * UniformDouble(rng_);
      g.work_left_s = p_.compute_s;
    }
  }

  void EndIteration() {
    waiting_ = true;
    double last = 0;
    for (const TrainingServerState& g : servers_) last = std::max(last, g.done_s);
    const double end = last + p_.sync_s;
    if (end <= core::ToSeconds(c_.duration)) {
      ++run_.iterations;
      run_.busy_s = end;
      run_.iteration_ends_s.push_back(end);
    }
    next_start_s_ = end;
    if (c_.checkpoint_every.count() > 0 && end >= next_checkpoint_s_) {
      checkpoint_begin_s_ = end;
      checkpoint_end_s_ = end + core::ToSeconds(c_.checkpoint_for);
      run_.checkpoint_starts_s.push_back(end);
      next_checkpoint_s_ += core::ToSeconds(c_.checkpoint_every);
      next_start_s_ = checkpoint_end_s_;
    }
  }

  double StepServer(TrainingServerState& g, double t0, double t1) {
    const double dt = t1 - t0;
    const double k = StepOverlap(t0, t1, checkpoint_begin_s_, checkpoint_end_s_) / dt;
    double a = 0;
    const double from = std::max(t0, g.start_s);
    if (g.work_left_s > 0 && from < t1) a = std::min((t1 - from) / dt, g.work_left_s / dt);
    const double other_w = k * c_.checkpoint_w + (1 - a - k) * p_.sync_w;
    const double demand_w = a * p_.compute_w + other_w;
    if (g.drawn_w < 0) g.drawn_w = demand_w;
    g.drawn_w = s_ ? SmoothedPower(*s_, g.drawn_w, demand_w, dt, g.below_s) : demand_w;
    if (a > 0) {
      const double compute_w =
          s_ ? std::min(p_.compute_w, (g.drawn_w - other_w) / a) : p_.compute_w;
      const double speed = SpeedAtPower(p_, compute_w);
      const double work = speed * a * dt;
      if (work >= g.work_left_s - 1e-12) {
        g.done_s = from + g.work_left_s / std::max(speed, 1e-9);
        g.work_left_s = 0;
      } else {
        g.work_left_s -= work;
      }
    }
    const double gpus_w = c_.gpus_per_server * g.drawn_w;
    return gpus_w + c_.non_gpu_idle_w +
           c_.non_gpu_slope * (gpus_w - c_.gpus_per_server * c_.gpu_idle_w);
  }

  const TrainingRowConfig& c_;
  const IterationProfile& p_;
  const PowerSmoothing* s_;
  std::mt19937_64 rng_;
  std::vector<TrainingServerState> servers_;
  bool waiting_ = false;
  double next_start_s_ = 0;
  double next_checkpoint_s_ = 0;
  double checkpoint_begin_s_ = -1;
  double checkpoint_end_s_ = -1;
  TrainingRowRun run_;
};

// Largest rises and falls between consecutive windows' means, sliding by one step.
std::pair<double, double> WindowRamps(const std::vector<double>& p, std::size_t w, double w_s) {
  std::vector<double> prefix(p.size() + 1, 0.0);
  for (std::size_t i = 0; i < p.size(); ++i) prefix[i + 1] = prefix[i] + p[i];
  double up = 0;
  double down = 0;
  for (std::size_t i = 0; i + 2 * w <= p.size(); ++i) {
    const double before = (prefix[i + w] - prefix[i]) / w;
    const double after = (prefix[i + 2 * w] - prefix[i + w]) / w;
    up = std::max(up, (after - before) / w_s);
    down = std::max(down, (before - after) / w_s);
  }
  return {up, down};
}

void SummarizeTrainingRun(const TrainingRowConfig& c, TrainingRowRun& run) {
  const std::vector<double>& p = run.power_w;
  const double dt = run.step_s;
  double sum = 0;
  run.peak_w = run.minimum_w = p.front();
  for (std::size_t i = 0; i < p.size(); ++i) {
    sum += p[i];
    run.peak_w = std::max(run.peak_w, p[i]);
    run.minimum_w = std::min(run.minimum_w, p[i]);
    if (i > 0) {
      run.ramp_up_step_w_per_s = std::max(run.ramp_up_step_w_per_s, (p[i] - p[i - 1]) / dt);
      run.ramp_down_step_w_per_s = std::max(run.ramp_down_step_w_per_s, (p[i - 1] - p[i]) / dt);
    }
    if ((i + 1) * dt <= run.busy_s) {
      run.energy_j += p[i] * dt;
    } else if (i * dt < run.busy_s) {
      run.energy_j += p[i] * (run.busy_s - i * dt);
    }
  }
  run.average_w = sum / p.size();
  const double w_s = core::ToSeconds(c.ramp_window);
  const auto w = static_cast<std::size_t>(std::max(1.0, std::round(w_s / dt)));
  std::tie(run.ramp_up_window_w_per_s, run.ramp_down_window_w_per_s) = WindowRamps(p, w, w * dt);
  run.spectrum = WelchSpectrum(p, dt);
  run.low_band = Band(run.spectrum, kLowBandLoHz, kLowBandHiHz);
  run.high_band = Band(run.spectrum, kHighBandLoHz, kHighBandHiHz);
}

}  // namespace

IterationProfile ProfileAtClock(const model::TrainingModel& training, core::Megahertz clock) {
  const model::GpuPowerModel& gpu = training.gpu();
  const model::Phase compute = training.ComputePhase();
  const core::Megahertz run_clock =
      gpu.MaxClockUnder(gpu.spec().power_limit_default, compute, 1.0, clock);
  const model::IterationEstimate e = training.AtClock(run_clock);
  IterationProfile p{.compute_s = e.compute_s,
                     .sync_s = e.sync_s,
                     .compute_w = e.compute_power.value(),
                     .sync_w = e.sync_power.value()};
  for (core::Megahertz f : gpu.spec().SupportedSmClocks()) {  // highest first
    if (f > run_clock) continue;
    p.speed_at_power.emplace_back(gpu.PhasePower(compute, f).value(),
                                  e.compute_s / gpu.Time(compute, f).time_s);
  }
  std::reverse(p.speed_at_power.begin(), p.speed_at_power.end());
  return p;
}

TrainingRowRun SimulateTrainingRow(const TrainingRowConfig& config, const IterationProfile& profile,
                                   const PowerSmoothing* smoothing) {
  HEADROOM_CHECK(config.servers > 0 && config.step.count() > 0 && config.duration >= config.step &&
                 profile.compute_s > 0)
      << "SimulateTrainingRow: servers, step, duration and compute time must be positive";
  TrainingJob job(config, profile, smoothing);
  TrainingRowRun& run = job.run();
  run.step_s = core::ToSeconds(config.step);
  const auto steps = static_cast<std::size_t>(config.duration / config.step);
  run.power_w.reserve(steps);
  for (std::size_t i = 0; i < steps; ++i) {
    run.power_w.push_back(job.Step(i * run.step_s, (i + 1) * run.step_s));
  }
  SummarizeTrainingRun(config, run);
  return std::move(run);
}

}  // namespace headroom::sim
