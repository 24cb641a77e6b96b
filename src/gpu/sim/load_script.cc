#include "gpu/sim/load_script.h"

#include <array>

#include <fmt/format.h>

#include "core/check.h"
#include "core/parse.h"

namespace headroom::gpu::sim {
namespace {

using core::Error;
using core::Fail;

struct Preset {
  std::string_view name;
  std::string_view script;
};

// An inference server alternates compute-bound prefill bursts with memory-bound decode.
// A constant table rather than a heap-allocated map: this code also runs inside the fake
// libnvidia-ml.so, which tests dlopen and dlclose, and a leaked singleton there is a real leak.
constexpr std::array<Preset, 4> kPresets = {{
    {"idle", "idle"},
    {"prefill", "prefill"},
    {"decode", "decode"},
    {"inference", "prefill:400ms,decode:1600ms"},
}};

std::string_view ExpandPreset(std::string_view body) {
  for (const Preset& p : kPresets) {
    if (p.name == body) return p.script;
  }
  return body;
}

core::Result<model::Phase> PhaseOfKind(std::string_view kind) {
  if (kind == "idle") return model::Phase{};
  if (kind == "prefill") return model::PrefillLikePhase();
  if (kind == "decode") return model::DecodeLikePhase();
  return Fail(Error::InvalidArgument(
      fmt::format("unknown load kind '{}' (expected idle, prefill or decode)", kind)));
}

core::Result<LoadSegment> ParseSegment(std::string_view text, bool alone) {
  LoadSegment seg;
  std::string_view head = text;
  const size_t colon = text.find(':');
  if (colon != std::string_view::npos) {
    head = text.substr(0, colon);
    HEADROOM_ASSIGN_OR_RETURN(seg.duration, core::ParseDuration(text.substr(colon + 1)));
    if (seg.duration.count() <= 0) {
      return Fail(Error::InvalidArgument(fmt::format("segment '{}' has a zero duration", text)));
    }
  } else if (!alone) {
    return Fail(Error::InvalidArgument(fmt::format(
        "segment '{}' needs a duration (e.g. {}:2s) when the script has several", text, text)));
  }
  std::string_view kind = head;
  seg.busy = 1.0;
  const size_t star = head.find('*');
  if (star != std::string_view::npos) {
    kind = head.substr(0, star);
    HEADROOM_ASSIGN_OR_RETURN(seg.busy, core::ParseDouble(head.substr(star + 1)));
    if (seg.busy < 0 || seg.busy > 1) {
      return Fail(Error::InvalidArgument(
          fmt::format("segment '{}': busy fraction must be in [0, 1]", text)));
    }
  }
  seg.kind = std::string(core::Trim(kind));
  HEADROOM_ASSIGN_OR_RETURN(seg.phase, PhaseOfKind(seg.kind));
  if (seg.kind == "idle") seg.busy = 0;
  if (seg.duration.count() == 0) seg.duration = std::chrono::seconds(1);
  return seg;
}

}  // namespace

core::Result<LoadScript> LoadScript::Parse(std::string_view text) {
  std::string_view body = core::Trim(text);
  body = ExpandPreset(body);
  LoadScript script;
  script.text_ = std::string(core::Trim(text));
  const auto parts = core::Split(body, ',');
  for (std::string_view part : parts) {
    auto seg = ParseSegment(core::Trim(part), parts.size() == 1);
    if (!seg) return Fail(seg.error().WithContext(fmt::format("load script '{}'", text)));
    // The period must fit int64 ns: a wrapped sum (even to 0) would divide by zero in
    // SegmentIndexAt.
    if (seg->duration > core::Duration::max() - script.period_) {
      return Fail(Error::InvalidArgument(
          fmt::format("load script '{}': its segments add up to more than {} days", text,
                      core::Duration::max() / std::chrono::days(1))));
    }
    script.period_ += seg->duration;
    script.segments_.push_back(std::move(*seg));
  }
  return script;
}

LoadScript LoadScript::Idle() { return *Parse("idle"); }

LoadScript LoadScript::FromSegments(std::vector<LoadSegment> segments) {
  HEADROOM_CHECK(!segments.empty()) << "a load script needs a segment";
  LoadScript script;
  for (const LoadSegment& seg : segments) {
    HEADROOM_CHECK(seg.duration.count() > 0) << "segment " << seg.kind << " has no duration";
    script.period_ += seg.duration;
    if (!script.text_.empty()) script.text_ += ",";
    script.text_ += seg.kind;
  }
  script.segments_ = std::move(segments);
  return script;
}

size_t LoadScript::SegmentIndexAt(core::Duration elapsed) const {
  core::Duration t = elapsed % period_;
  for (size_t i = 0; i < segments_.size(); ++i) {
    if (t < segments_[i].duration) return i;
    t -= segments_[i].duration;
  }
  return segments_.size() - 1;
}

}  // namespace headroom::gpu::sim
