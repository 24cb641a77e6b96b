#include "sim/recorded_requests.h"

#include <algorithm>

namespace headroom::sim {
namespace {

constexpr std::uint32_t kPriorityBits = 2;
constexpr std::uint32_t kMaxOutputTokens = (1u << (32 - kPriorityBits)) - 1;

}  // namespace

TraceRequest RecordedRequests::at(std::size_t i) const {
  const Packed& p = chunks_[i / kChunk][i % kChunk];
  TraceRequest r{
      .arrival_s = p.arrival_s,
      .prompt_tokens = p.prompt_tokens,
      .output_tokens = static_cast<int>(p.output_and_priority >> kPriorityBits),
      .priority = static_cast<Priority>(p.output_and_priority & ((1u << kPriorityBits) - 1))};
  if (!cached_chunks_.empty()) {
    const std::int32_t cached = cached_chunks_[i / kChunk][i % kChunk];
    if (cached != kNotRecorded) r.cached_tokens = cached;
  }
  return r;
}

bool RecordedRequests::Append(const TraceRequest& r) {
  if (r.output_tokens < 0 || static_cast<std::uint32_t>(r.output_tokens) > kMaxOutputTokens) {
    return false;
  }
  // Not value-initialized: every entry is written before it is read, and a chunk's pages that
  // are never written (most of a short trace's only chunk) are never touched.
  if (size_ == chunks_.size() * kChunk) {
    chunks_.push_back(std::make_unique_for_overwrite<Packed[]>(kChunk));
  }
  chunks_[size_ / kChunk][size_ % kChunk] = {
      .arrival_s = r.arrival_s,
      .prompt_tokens = r.prompt_tokens,
      .output_and_priority = static_cast<std::uint32_t>(r.output_tokens) << kPriorityBits |
                             static_cast<std::uint32_t>(r.priority)};
  if (r.cached_tokens || !cached_chunks_.empty()) {
    // Chunks for every request so far, the earlier ones not recorded.
    while (cached_chunks_.size() < chunks_.size()) {
      cached_chunks_.push_back(std::make_unique_for_overwrite<std::int32_t[]>(kChunk));
      std::fill_n(cached_chunks_.back().get(), kChunk, kNotRecorded);
    }
    cached_chunks_[size_ / kChunk][size_ % kChunk] = r.cached_tokens.value_or(kNotRecorded);
  }
  ++size_;
  return true;
}

RecordingSource::RecordingSource(RequestSource& source)
    : source_(source), recording_(std::make_shared<RecordedRequests>()) {}

core::Result<std::optional<TraceRequest>> RecordingSource::Next() {
  HEADROOM_ASSIGN_OR_RETURN(std::optional<TraceRequest> r, source_.Next());
  if (!recording_) return r;
  if (!r) {
    complete_ = true;
    recording_->start_time_ = source_.start_time();
    return r;
  }
  if (!recording_->Append(*r)) recording_.reset();
  return r;
}

std::shared_ptr<const RecordedRequests> RecordingSource::Take() {
  complete_ = false;
  return std::move(recording_);
}

core::Result<std::optional<TraceRequest>> ReplaySource::Next() {
  if (next_ >= recording_->size()) return std::optional<TraceRequest>();
  return std::optional<TraceRequest>(recording_->at(next_++));
}

}  // namespace headroom::sim
