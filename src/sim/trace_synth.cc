#include "sim/trace_synth.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>

#include <fmt/format.h>

#include "sim/random_draws.h"

namespace headroom::sim {
namespace {

constexpr double kWeekSeconds = 7 * core::kSecondsPerDay;
// The daily curve's shape, cos(x) + kSecondHarmonic cos(2x) with x = 0 at the peak: the second
// harmonic widens and flattens the night trough and sharpens the afternoon peak. Its maximum is
// at x = 0 (1 + k) and its minimum at x = pi (-1 + k) for 0 <= k <= 1/4.
constexpr double kSecondHarmonic = 0.25;
constexpr double kShapeMax = 1 + kSecondHarmonic;
constexpr double kShapeMin = -1 + kSecondHarmonic;
// Streams drawn from one seed (DeriveSeed).
constexpr std::uint64_t kArrivalStream = 0;
constexpr std::uint64_t kBurstStream = 1;
constexpr std::uint64_t kTokenStream = 2;
// The envelope's pieces lie within a block: short enough that the daily curve barely moves
// within one (its bound is within 0.4% of the rate: almost every candidate is kept), long enough
// that starting a piece (four cosines) and seeding a block's two generators cost little against
// the few hundred candidates it holds at a row's rates; and the unit in which a stretch of a
// trace can be generated alone (SynthParams::window_begin). Margins far above the rounding of Shape
// (absolute: 1 + a(...) loses digits near a deep trough) and of the rate's few operations
// (relative). A piece's end at a day's end is evaluated that far inside the day, so that the weekly
// factor of the next day never enters its bounds.
constexpr double kBlockS = 60;
constexpr double kDayEdgeS = 1e-3;
constexpr double kShapeRounding = 1e-12;
constexpr double kBoundMargin = 1e-9;

core::Status CheckParams(const SynthParams& p) {
  auto bad = [](std::string_view what, double value, std::string_view rule) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("synthesized trace: {} {} must be {}", what, value, rule)));
  };
  auto finite = [](double v) { return std::isfinite(v); };
  if (!finite(p.mean_rate_per_s) || p.mean_rate_per_s < 0) {
    return bad("mean rate", p.mean_rate_per_s, "at least 0 requests/s (0: the source's)");
  }
  if (!finite(p.rate_scale) || p.rate_scale <= 0) return bad("rate scale", p.rate_scale, "above 0");
  if (p.duration <= core::Duration::zero()) {
    return bad("duration (s)", core::ToSeconds(p.duration), "above 0");
  }
  if (!finite(p.peak_to_trough) || p.peak_to_trough < 1) {
    return bad("peak-to-trough ratio", p.peak_to_trough, "at least 1");
  }
  if (!finite(p.peak_hour) || p.peak_hour < 0 || p.peak_hour >= 24) {
    return bad("peak hour", p.peak_hour, "in [0, 24)");
  }
  if (!finite(p.weekend_factor) || p.weekend_factor <= 0) {
    return bad("weekend factor", p.weekend_factor, "above 0");
  }
  if (!finite(p.bursts_per_day) || p.bursts_per_day < 0) {
    return bad("bursts per day", p.bursts_per_day, "at least 0");
  }
  if (!finite(p.burst_size) || p.burst_size < 1)
    return bad("burst size", p.burst_size, "at least 1");
  if (p.bursts_per_day > 0 && p.burst_length <= core::Duration::zero()) {
    return bad("burst length (s)", core::ToSeconds(p.burst_length), "above 0");
  }
  if (p.window_begin < core::Duration::zero() || p.window_begin >= p.duration) {
    return bad("window begin (s)", core::ToSeconds(p.window_begin), "in [0, duration)");
  }
  return core::Ok();
}

}  // namespace

namespace {

// Reads `source` to its end for its mean rate, and its token pairs and cached tokens into
// `sample` when given.
core::Result<double> ReadToEnd(RequestSource& source, TraceSample* sample) {
  std::size_t requests = 0;
  double first_s = 0, last_s = 0;
  while (true) {
    HEADROOM_ASSIGN_OR_RETURN(const std::optional<TraceRequest> r, source.Next());
    if (!r) break;
    if (requests == 0) first_s = r->arrival_s;
    last_s = r->arrival_s;
    ++requests;
    if (!sample) continue;
    sample->pairs.push_back({r->prompt_tokens, r->output_tokens});
    if (r->cached_tokens && sample->cached.empty()) sample->cached.resize(sample->pairs.size() - 1);
    if (r->cached_tokens || !sample->cached.empty()) sample->cached.push_back(r->cached_tokens);
  }
  if (requests < 2 || last_s <= first_s) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("a trace to synthesize from needs at least 2 requests over some time "
                    "(found {} over {} s)",
                    requests, last_s - first_s)));
  }
  return static_cast<double>(requests) / (last_s - first_s);
}

}  // namespace

core::Result<TraceSample> SampleTrace(RequestSource& source) {
  TraceSample sample;
  HEADROOM_ASSIGN_OR_RETURN(sample.mean_rate_per_s, ReadToEnd(source, &sample));
  return sample;
}

core::Result<double> MeanRate(RequestSource& source) { return ReadToEnd(source, nullptr); }

core::Result<std::unique_ptr<TraceSynth>> TraceSynth::Create(TraceSample sample,
                                                             const SynthParams& params) {
  HEADROOM_RETURN_IF_ERROR(CheckParams(params));
  if (sample.pairs.empty()) {
    return core::Fail(
        core::Error::InvalidArgument("synthesized trace: the source has no requests"));
  }
  if (params.mean_rate_per_s == 0 &&
      !(std::isfinite(sample.mean_rate_per_s) && sample.mean_rate_per_s > 0)) {
    return core::Fail(
        core::Error::InvalidArgument("synthesized trace: the source has no mean rate; give one"));
  }
  return std::unique_ptr<TraceSynth>(new TraceSynth(std::move(sample), params));
}

TraceSynth::TraceSynth(TraceSample sample, const SynthParams& params)
    : sample_(std::move(sample)),
      params_(params),
      bursts_(DeriveSeed(params.seed, kBurstStream)),
      burst_end_s_(-std::numeric_limits<double>::infinity()) {
  const double mean = params.mean_rate_per_s > 0 ? params.mean_rate_per_s : sample_.mean_rate_per_s;
  target_rate_ = mean * params.rate_scale;
  duration_s_ = core::ToSeconds(params.duration);
  const std::chrono::sys_time<core::Duration> start(params.start);
  const auto start_day = std::chrono::floor<std::chrono::days>(start);
  const unsigned weekday = std::chrono::weekday(start_day).iso_encoding() - 1;  // Monday: 0
  start_of_week_s_ = weekday * core::kSecondsPerDay + core::ToSeconds(start - start_day);
  // peak / trough = (1 + a kShapeMax) / (1 + a kShapeMin).
  const double r = params.peak_to_trough;
  daily_amplitude_ = (r - 1) / (kShapeMax - r * kShapeMin);
  weekly_norm_ = 7 / (5 + 2 * params.weekend_factor);
  // A time is in a burst when one started within burst_length before it: probability
  // 1 - exp(-bursts per second x length) for Poisson starts.
  const double burst_rate = params.bursts_per_day / core::kSecondsPerDay;
  const double in_burst = -std::expm1(-burst_rate * core::ToSeconds(params.burst_length));
  burst_mean_ = 1 + (params.burst_size - 1) * in_burst;
  next_burst_s_ = burst_rate > 0 ? ExponentialDraw(bursts_, burst_rate)
                                 : std::numeric_limits<double>::infinity();
  // |d/dt (cos x + k cos 2x)| <= 1 + 2k, and x moves 2 pi a day.
  shape_slope_ = (std::max(1.0, params.weekend_factor) * weekly_norm_) * daily_amplitude_ *
                 (1 + 2 * kSecondHarmonic) * (2 * std::numbers::pi / core::kSecondsPerDay);
  window_begin_s_ = core::ToSeconds(params.window_begin);
  t_s_ = std::floor(window_begin_s_ / kBlockS) * kBlockS;
  StartBlock();
  StartPiece();
}

void TraceSynth::StartBlock() {
  const auto block = static_cast<std::uint64_t>(std::llround(t_s_ / kBlockS));
  arrivals_.seed(DeriveSeed(DeriveSeed(params_.seed, kArrivalStream), block));
  tokens_.seed(DeriveSeed(DeriveSeed(params_.seed, kTokenStream), block));
  next_pair_ = UniformIndex(tokens_, sample_.pairs.size());
  block_end_s_ = static_cast<double>(block + 1) * kBlockS;
}

double TraceSynth::Shape(double t_s) const {
  const double week_s = std::fmod(start_of_week_s_ + t_s, kWeekSeconds);
  const int day = static_cast<int>(week_s / core::kSecondsPerDay);  // Monday: 0
  const double hour = (week_s - day * core::kSecondsPerDay) / 3600;
  const double x = 2 * std::numbers::pi * (hour - params_.peak_hour) / 24;
  const double daily = 1 + daily_amplitude_ * (std::cos(x) + kSecondHarmonic * std::cos(2 * x));
  const double weekly = (day >= 5 ? params_.weekend_factor : 1.0) * weekly_norm_;
  return daily * weekly;
}

double TraceSynth::DayEnd(double t_s) const {
  const double week_s = std::fmod(start_of_week_s_ + t_s, kWeekSeconds);
  return t_s + (core::kSecondsPerDay - std::fmod(week_s, core::kSecondsPerDay));
}

double TraceSynth::ExpectedRate(double t_s) const { return target_rate_ * Shape(t_s); }

double TraceSynth::RateAt(double t_s, bool in_burst) const {
  return target_rate_ * (in_burst ? params_.burst_size : 1.0) / burst_mean_ * Shape(t_s);
}

std::vector<std::pair<double, double>> TraceSynth::Bursts() const {
  std::vector<std::pair<double, double>> out;
  const double burst_rate = params_.bursts_per_day / core::kSecondsPerDay;
  if (burst_rate <= 0) return out;
  // The very draws InBurst makes, from a generator of its own.
  std::mt19937_64 draws(DeriveSeed(params_.seed, kBurstStream));
  const double length = core::ToSeconds(params_.burst_length);
  for (double start = ExponentialDraw(draws, burst_rate); start < duration_s_;
       start += ExponentialDraw(draws, burst_rate)) {
    if (!out.empty() && start <= out.back().second) {
      out.back().second = start + length;
    } else {
      out.emplace_back(start, start + length);
    }
  }
  return out;
}

double TraceSynth::MeanTokens() const {
  double sum = 0;
  for (const TokenPair& p : sample_.pairs) sum += p.prompt_tokens + p.output_tokens;
  return sum / static_cast<double>(sample_.pairs.size());
}

void TraceSynth::StartPiece() {
  const bool burst = InBurst(t_s_);
  const double day_end = DayEnd(t_s_);
  double end = std::min({block_end_s_, day_end, burst ? burst_end_s_ : next_burst_s_});
  end = std::max(end, std::nextafter(t_s_, std::numeric_limits<double>::infinity()));
  piece_end_s_ = end;
  rate_factor_ = target_rate_ * (burst ? params_.burst_size : 1.0) / burst_mean_;
  const double last = std::max(t_s_, std::min(end, day_end - kDayEdgeS));
  const double a = Shape(t_s_);
  const double b = Shape(last);
  // Shape moves at most shape_slope_ per second within a day: over the piece it stays within
  // that much of both ends' values.
  const double reach = shape_slope_ * (end - t_s_) + kShapeRounding;
  piece_rate_ = rate_factor_ * (std::max(a, b) + reach) * (1 + kBoundMargin);
  piece_floor_ = rate_factor_ * std::max(0.0, std::min(a, b) - reach) * (1 - kBoundMargin);
}

bool TraceSynth::Kept(double u) {
  const double threshold = u * piece_rate_;
  if (!check_envelope_) {
    return threshold < piece_floor_ || threshold < rate_factor_ * Shape(t_s_);
  }
  const double rate = rate_factor_ * Shape(t_s_);
  const bool by_envelope = threshold < piece_floor_ || threshold < rate;
  if (by_envelope != (threshold < rate) || rate > piece_rate_ || rate < piece_floor_) {
    ++envelope_violations_;
  }
  return threshold < rate;
}

bool TraceSynth::InBurst(double t_s) {
  const double burst_rate = params_.bursts_per_day / core::kSecondsPerDay;
  while (next_burst_s_ <= t_s) {
    burst_end_s_ = next_burst_s_ + core::ToSeconds(params_.burst_length);
    next_burst_s_ += ExponentialDraw(bursts_, burst_rate);
  }
  return t_s < burst_end_s_;
}

core::Result<std::optional<TraceRequest>> TraceSynth::Next() {
  // Thinning (Lewis and Shedler 1979) under a piecewise-constant envelope: within a piece,
  // candidates come at its bound on the rate, each kept with probability rate(t) / bound; a
  // candidate past the piece's end is dropped and the next piece starts at that end, as the
  // exponential's lack of memory allows (a block's fresh generators too).
  while (!done_) {
    const double candidate = t_s_ + ExponentialDraw(arrivals_, piece_rate_);
    if (candidate >= piece_end_s_) {
      t_s_ = piece_end_s_;
      if (t_s_ >= duration_s_) {
        done_ = true;
        break;
      }
      if (t_s_ >= block_end_s_) StartBlock();
      StartPiece();
      continue;
    }
    t_s_ = candidate;
    if (t_s_ >= duration_s_) {
      done_ = true;
      break;
    }
    if (!Kept(UniformDouble(arrivals_))) continue;
    // The pair is drawn one request ahead and fetched meanwhile: a random read of the sample
    // misses the cache, and waiting for it was most of this function's time.
    const std::size_t drawn = next_pair_;
    const TokenPair pair = sample_.pairs[drawn];
    next_pair_ = UniformIndex(tokens_, sample_.pairs.size());
    __builtin_prefetch(&sample_.pairs[next_pair_]);
    if (t_s_ < window_begin_s_) continue;  // drawn as the whole trace draws it, not given
    TraceRequest r{.arrival_s = t_s_ - window_begin_s_,
                   .prompt_tokens = pair.prompt_tokens,
                   .output_tokens = pair.output_tokens,
                   .priority = params_.priority};
    if (!sample_.cached.empty()) r.cached_tokens = sample_.cached[drawn];
    return std::optional<TraceRequest>(r);
  }
  return std::optional<TraceRequest>();
}

}  // namespace headroom::sim
