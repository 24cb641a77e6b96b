#include "sim/request_source.h"

#include <cmath>

#include <fmt/format.h>

#include "sim/random_draws.h"

namespace headroom::sim {

core::Result<std::optional<TraceRequest>> VectorSource::Next() {
  if (next_ >= requests_.size()) return std::optional<TraceRequest>();
  return std::optional<TraceRequest>(requests_[next_++]);
}

core::Result<std::unique_ptr<ScaledSource>> ScaledSource::Create(
    std::unique_ptr<RequestSource> source, double factor, std::uint64_t seed,
    core::Duration jitter) {
  if (!std::isfinite(factor) || factor <= 0) {
    return core::Fail(core::Error::InvalidArgument(
        fmt::format("load scale factor {} must be a number above 0", factor)));
  }
  const double jitter_s = core::ToSeconds(jitter);
  if (jitter_s <= 0) {
    return core::Fail(
        core::Error::InvalidArgument(fmt::format("copy jitter {} s must be above 0", jitter_s)));
  }
  return std::unique_ptr<ScaledSource>(new ScaledSource(std::move(source), factor, seed, jitter_s));
}

core::Result<bool> ScaledSource::Pull() {
  HEADROOM_ASSIGN_OR_RETURN(const std::optional<TraceRequest> next, source_->Next());
  if (!next) return false;
  input_arrival_s_ = next->arrival_s;
  const double whole = std::floor(factor_);
  const int copies = static_cast<int>(whole) + (UniformDouble(rng_) < factor_ - whole ? 1 : 0);
  for (int i = 0; i < copies; ++i) {
    Pending p{*next, seq_++};
    // (0, jitter]: 1 - U is in (0, 1].
    if (i > 0) p.request.arrival_s += jitter_s_ * (1.0 - UniformDouble(rng_));
    heap_.push(p);
  }
  return true;
}

core::Result<std::optional<TraceRequest>> ScaledSource::Next() {
  // Every later input arrives at or after input_arrival_s_, and its copies no earlier, so the
  // heap's top may leave once it is no later than that (or the input has ended).
  while (!input_done_ && (heap_.empty() || heap_.top().request.arrival_s > input_arrival_s_)) {
    HEADROOM_ASSIGN_OR_RETURN(const bool more, Pull());
    input_done_ = !more;
  }
  if (heap_.empty()) return std::optional<TraceRequest>();
  const TraceRequest r = heap_.top().request;
  heap_.pop();
  return std::optional<TraceRequest>(r);
}

MergedSource::MergedSource(std::vector<Input> inputs)
    : inputs_(std::move(inputs)), heads_(inputs_.size()) {}

std::optional<core::Duration> MergedSource::start_time() const {
  return inputs_.empty() ? std::nullopt : inputs_.front().source->start_time();
}

core::Result<std::optional<TraceRequest>> MergedSource::Next() {
  auto advance = [this](size_t i) -> core::Status {
    HEADROOM_ASSIGN_OR_RETURN(heads_[i], inputs_[i].source->Next());
    if (heads_[i] && inputs_[i].priority) heads_[i]->priority = *inputs_[i].priority;
    return core::Ok();
  };
  if (!primed_) {
    for (size_t i = 0; i < inputs_.size(); ++i) HEADROOM_RETURN_IF_ERROR(advance(i));
    primed_ = true;
  }
  std::optional<size_t> best;
  for (size_t i = 0; i < heads_.size(); ++i) {
    if (heads_[i] && (!best || heads_[i]->arrival_s < heads_[*best]->arrival_s)) best = i;
  }
  if (!best) return std::optional<TraceRequest>();
  const TraceRequest r = *heads_[*best];
  HEADROOM_RETURN_IF_ERROR(advance(*best));
  return std::optional<TraceRequest>(r);
}

}  // namespace headroom::sim
