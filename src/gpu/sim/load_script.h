// LoadScript: what a simulated GPU runs over time, as a looping timeline of segments, each a
// kind of work (idle, prefill-like, decode-like) at a duty cycle for a duration.
// Text form, for flags and files:  SEGMENT[,SEGMENT...]  with  SEGMENT = KIND[*BUSY][:DURATION]
// e.g. "prefill:400ms,decode*0.8:1600ms", or a preset: idle, prefill, decode, inference.
// A single segment without a duration is a constant load. Immutable value, thread-compatible.
#ifndef HEADROOM_GPU_SIM_LOAD_SCRIPT_H_
#define HEADROOM_GPU_SIM_LOAD_SCRIPT_H_

#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "core/time.h"
#include "model/gpu_power_model.h"

namespace headroom::gpu::sim {

struct LoadSegment {
  std::string kind;    // "idle", "prefill", "decode"
  model::Phase phase;  // the work, per repetition
  double busy = 0;     // fraction of the time a kernel runs, in [0, 1]
  core::Duration duration{0};
};

class LoadScript {
 public:
  [[nodiscard]] static core::Result<LoadScript> Parse(std::string_view text);
  static LoadScript Idle();
  // A script of arbitrary phases (e.g. a model's prefill and decode), looping.
  // REQUIRES: segments non-empty, each with a positive duration.
  static LoadScript FromSegments(std::vector<LoadSegment> segments);

  // The segment running `elapsed` after the start (the script loops).
  // Returns its index into segments().
  size_t SegmentIndexAt(core::Duration elapsed) const;
  const std::vector<LoadSegment>& segments() const { return segments_; }
  core::Duration period() const { return period_; }
  const std::string& text() const { return text_; }

 private:
  std::vector<LoadSegment> segments_;
  core::Duration period_{0};
  std::string text_;
};

}  // namespace headroom::gpu::sim

#endif  // HEADROOM_GPU_SIM_LOAD_SCRIPT_H_
