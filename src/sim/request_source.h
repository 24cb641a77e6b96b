// RequestSource: a stream of LLM inference requests in arrival order, pulled one at a time so
// that memory stays flat in the trace's length (a week of requests is never held at once). The
// trace reader, the synthesizer (trace_synth.h) and the adapters here implement it; the row
// simulator consumes it. Every adapter passes each request's recorded fields (cached tokens
// included) through unchanged, ScaledSource's copies too. Also here: VectorSource (in-memory, for
// tests), ScaledSource (a trace's load times k) and MergedSource (several traces interleaved by
// time, tagged by priority). Not thread-safe.
#ifndef HEADROOM_SIM_REQUEST_SOURCE_H_
#define HEADROOM_SIM_REQUEST_SOURCE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <vector>

#include "core/result.h"
#include "core/time.h"

namespace headroom::sim {

enum class Priority { kHigh, kLow, kUnspecified };

struct TraceRequest {
  double arrival_s = 0;  // since the trace's first request
  int prompt_tokens = 0;
  int output_tokens = 0;
  Priority priority = Priority::kUnspecified;
  // Prompt tokens a prefix cache already held for this request, where the trace records it (a
  // `cached_tokens` column); nullopt: not recorded, the scenario's prefix cache decides.
  // Invariant where set: 0 <= cached_tokens <= prompt_tokens.
  std::optional<int> cached_tokens = std::nullopt;
};

// Invariant of every implementation: arrival_s never decreases from one request to the next.
class RequestSource {
 public:
  virtual ~RequestSource() = default;

  // The next request; nullopt at the end (and on every call after it).
  [[nodiscard]] virtual core::Result<std::optional<TraceRequest>> Next() = 0;

  // Wall-clock time (UTC, since 1970) of arrival_s == 0, where the source knows it: an Azure
  // trace knows it once its first request has been read; a generic CSV never does.
  virtual std::optional<core::Duration> start_time() const { return std::nullopt; }
};

// The given requests in order. REQUIRES: arrivals sorted.
class VectorSource final : public RequestSource {
 public:
  explicit VectorSource(std::vector<TraceRequest> requests) : requests_(std::move(requests)) {}
  [[nodiscard]] core::Result<std::optional<TraceRequest>> Next() override;

 private:
  std::vector<TraceRequest> requests_;
  size_t next_ = 0;
};

// A trace with its load multiplied by `factor` (k > 0): each request is emitted floor(k) times
// and once more with probability frac(k). The first copy keeps its arrival (so k = 1 is the
// trace itself); each further copy is delayed by a seeded uniform offset in (0, jitter] so that
// copies do not arrive together. A min-heap holds requests until no later input can precede
// them, so arrivals stay sorted and the buffer holds only about jitter x rate x k requests.
// Same source, factor, jitter and seed: the same stream.
class ScaledSource final : public RequestSource {
 public:
  // kInvalidArgument unless factor > 0 and jitter > 0 (both finite).
  [[nodiscard]] static core::Result<std::unique_ptr<ScaledSource>> Create(
      std::unique_ptr<RequestSource> source, double factor, std::uint64_t seed,
      core::Duration jitter = std::chrono::seconds(1));

  [[nodiscard]] core::Result<std::optional<TraceRequest>> Next() override;
  std::optional<core::Duration> start_time() const override { return source_->start_time(); }

 private:
  struct Pending {
    TraceRequest request;
    std::uint64_t seq = 0;  // ties leave in the order they were made
    bool operator>(const Pending& other) const {
      return request.arrival_s != other.request.arrival_s
                 ? request.arrival_s > other.request.arrival_s
                 : seq > other.seq;
    }
  };

  ScaledSource(std::unique_ptr<RequestSource> source, double factor, std::uint64_t seed,
               double jitter_s)
      : source_(std::move(source)), factor_(factor), jitter_s_(jitter_s), rng_(seed) {}
  // Copies of the next input request into the heap; false at the input's end.
  core::Result<bool> Pull();

  std::unique_ptr<RequestSource> source_;
  double factor_;
  double jitter_s_;
  std::mt19937_64 rng_;
  std::priority_queue<Pending, std::vector<Pending>, std::greater<>> heap_;
  std::uint64_t seq_ = 0;
  double input_arrival_s_ = 0;  // the latest input arrival: nothing later can precede it
  bool input_done_ = false;
};

// Several sources interleaved by arrival time (ties: the earlier input first), each optionally
// stamping one priority on all its requests (e.g. conversation -> kHigh, code -> kLow). Each
// input's arrivals count from its own first request, so all start together at 0.
class MergedSource final : public RequestSource {
 public:
  struct Input {
    std::unique_ptr<RequestSource> source;
    std::optional<Priority> priority;  // nullopt: keep each request's own
  };
  // REQUIRES: every input's source is non-null.
  explicit MergedSource(std::vector<Input> inputs);

  [[nodiscard]] core::Result<std::optional<TraceRequest>> Next() override;
  // The first input's.
  std::optional<core::Duration> start_time() const override;

 private:
  std::vector<Input> inputs_;
  std::vector<std::optional<TraceRequest>> heads_;  // each input's next request
  bool primed_ = false;
};

}  // namespace headroom::sim

#endif  // HEADROOM_SIM_REQUEST_SOURCE_H_
