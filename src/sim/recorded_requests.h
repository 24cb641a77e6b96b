// RecordedRequests: a request stream held in memory, compactly (16 bytes a request, 20 once a
// request has recorded cached tokens) and read-only,
// so that the simulations of one plan that run the same week at the same server count (each
// policy, and the uncapped baseline) replay the very same requests instead of synthesizing them
// again: same stream, same results, without the synthesizer's cost. A RecordingSource records a
// stream as a simulation pulls it, so the run that first needs a week pays nothing extra for it;
// ReplaySource plays a recording back. A recording is immutable once made: share it between
// threads freely. Sources themselves are not thread-safe.
#ifndef HEADROOM_SIM_RECORDED_REQUESTS_H_
#define HEADROOM_SIM_RECORDED_REQUESTS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "core/result.h"
#include "sim/request_source.h"

namespace headroom::sim {

class RecordedRequests {
 public:
  std::size_t size() const { return size_; }
  TraceRequest at(std::size_t i) const;
  // Memory held, for a cache's budget.
  std::size_t bytes() const {
    return chunks_.size() * kChunk * sizeof(Packed) +
           cached_chunks_.size() * kChunk * sizeof(std::int32_t);
  }
  // The recorded stream's RequestSource::start_time.
  std::optional<core::Duration> start_time() const { return start_time_; }

 private:
  friend class RecordingSource;
  // Priority in the low two bits of the output's count: a week holds millions of requests.
  struct Packed {
    double arrival_s;
    std::int32_t prompt_tokens;
    std::uint32_t output_and_priority;
  };
  static_assert(sizeof(Packed) == 16);
  // Fixed-size chunks: a recording grows without copying what it holds.
  static constexpr std::size_t kChunk = 1 << 16;

  // False for a request the packing cannot hold (over a billion output tokens).
  [[nodiscard]] bool Append(const TraceRequest& r);

  std::vector<std::unique_ptr<Packed[]>> chunks_;
  // Each request's TraceRequest::cached_tokens, kNotRecorded where it has none, beside chunks_;
  // empty until the first request with some, so that a trace without the column (every Azure
  // trace and synthesized week) keeps 16 bytes a request.
  static constexpr std::int32_t kNotRecorded = -1;
  std::vector<std::unique_ptr<std::int32_t[]>> cached_chunks_;
  std::size_t size_ = 0;
  std::optional<core::Duration> start_time_;
};

// Passes `source` through and records it. complete() once the stream has ended: only then is the
// recording the whole stream (a run stopped early leaves it partial). A request the recording
// cannot hold ends the recording, not the stream: recording only saves time.
class RecordingSource final : public RequestSource {
 public:
  explicit RecordingSource(RequestSource& source);

  [[nodiscard]] core::Result<std::optional<TraceRequest>> Next() override;
  std::optional<core::Duration> start_time() const override { return source_.start_time(); }

  bool complete() const { return complete_; }
  // The recording; REQUIRES: complete(). Leaves this source empty.
  std::shared_ptr<const RecordedRequests> Take();

 private:
  RequestSource& source_;
  std::shared_ptr<RecordedRequests> recording_;
  bool complete_ = false;
};

class ReplaySource final : public RequestSource {
 public:
  explicit ReplaySource(std::shared_ptr<const RecordedRequests> recording)
      : recording_(std::move(recording)) {}

  [[nodiscard]] core::Result<std::optional<TraceRequest>> Next() override;
  std::optional<core::Duration> start_time() const override { return recording_->start_time(); }

 private:
  std::shared_ptr<const RecordedRequests> recording_;
  std::size_t next_ = 0;
};

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_RECORDED_REQUESTS_H_
